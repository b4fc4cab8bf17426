// The dashboard's script, built from static/dashboard/*.ts by
// `deno task build:dashboard`. Edit those files and rebuild; do not edit this one.
(() => {
  // static/dashboard/dom.ts
  function byId(id, type) {
    const el = document.getElementById(id);
    if (el === null || !(el instanceof (type ?? HTMLElement))) {
      throw new TypeError(`The dashboard page has no ${type?.name ?? ""} #${id}`);
    }
    return el;
  }
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs ?? {})) {
      if (v === void 0 || v === null || v === false) continue;
      el.setAttribute(k, v === true ? "" : String(v));
    }
    append(el, children);
    return el;
  }
  function append(el, children) {
    for (const c of children) {
      if (c === null || c === void 0 || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else el.append(c instanceof Node ? c : String(c));
    }
  }
  function setText(id, text) {
    const el = byId(id);
    if (el.textContent !== text) el.textContent = text;
  }
  function widthOf(share) {
    return `width:${(Math.min(1, Math.max(0, share)) * 100).toFixed(2)}%`;
  }

  // static/dashboard/format.ts
  var intFormat = new Intl.NumberFormat(void 0, {
    maximumFractionDigits: 0
  });
  var SUPERSCRIPT = "\u2070\xB9\xB2\xB3\u2074\u2075\u2076\u2077\u2078\u2079";
  function isNum(x) {
    return typeof x === "number" && Number.isFinite(x);
  }
  function fmtInt(n) {
    return isNum(n) ? intFormat.format(n) : "\u2014";
  }
  function fmtPct(x, digits = 1) {
    if (!isNum(x)) return "\u2014";
    const p = x * 100;
    if (p > 0 && p < 0.1) return "<0.1%";
    if (p < 100 && p > 99.95) return ">99.9%";
    return `${p.toFixed(digits)}%`;
  }
  function fmtEvidence(x) {
    if (x === Infinity) return "\u221E";
    if (!isNum(x)) return "\u2014";
    if (x < 10) return x.toFixed(2);
    if (x < 1e5) return intFormat.format(x);
    const exp = Math.floor(Math.log10(x));
    const mantissa = x / 10 ** exp;
    const sup = [
      ...String(exp)
    ].map((d) => SUPERSCRIPT[Number(d)]).join("");
    return `${mantissa.toFixed(1)} \xD7 10${sup}`;
  }
  function fmtLatency(us) {
    if (!isNum(us)) return "\u2014";
    if (us === 0) return "0";
    if (us < 10) return `${us.toFixed(1)} \xB5s`;
    if (us < 1e3) return `${Math.round(us)} \xB5s`;
    if (us < 1e6) return `${(us / 1e3).toFixed(us < 1e4 ? 2 : 1)} ms`;
    return `${(us / 1e6).toFixed(2)} s`;
  }
  function fmtLatencyTick(us) {
    return fmtLatency(us).replace(/\.0+ /, " ").replace(/(\.\d*?)0+ /, "$1 ");
  }
  function fmtRate(r) {
    if (!isNum(r)) return "\u2014";
    if (r === 0) return "0";
    if (r < 10) return r.toFixed(2);
    if (r < 100) return r.toFixed(1);
    return intFormat.format(r);
  }
  function fmtDuration(sec) {
    if (!isNum(sec)) return "\u2014";
    if (sec < 1) return `${Math.round(sec * 1e3)} ms`;
    if (sec < 60) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
    const m = Math.floor(sec / 60);
    if (m < 60) return `${m} min ${Math.floor(sec % 60)} s`;
    const hours = Math.floor(m / 60);
    if (hours < 48) return `${hours} h ${m % 60} min`;
    return `${(sec / 86400).toFixed(1)} days`;
  }
  function fmtDurationShort(sec) {
    if (!isNum(sec)) return "\u2014";
    if (sec === 0) return "0 s";
    if (sec < 1) return `${Math.round(sec * 1e3)} ms`;
    if (sec < 100) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
    if (sec < 6e3) return `${(sec / 60).toFixed(1)} min`;
    if (sec < 172800) return `${(sec / 3600).toFixed(1)} h`;
    return `${(sec / 86400).toFixed(1)} days`;
  }
  function fmtMoney(x) {
    if (!isNum(x)) return "\u2014";
    const digits = x !== 0 && Math.abs(x) < 1 ? 4 : 2;
    return new Intl.NumberFormat(void 0, {
      minimumFractionDigits: Math.min(2, digits),
      maximumFractionDigits: digits
    }).format(x);
  }
  var clockFormat = new Intl.DateTimeFormat(void 0, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit"
  });
  function fmtClock(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return "\u2014";
    return clockFormat.format(d);
  }
  function fmtAgo(iso, now = Date.now()) {
    const t = new Date(iso).getTime();
    if (Number.isNaN(t)) return "";
    const sec = Math.max(0, (now - t) / 1e3);
    if (sec < 5) return "just now";
    if (sec < 60) return `${Math.round(sec)} s ago`;
    return `${fmtDuration(sec).replace(/ \d+ s$/, "")} ago`;
  }
  function fmtSecondsAgo(sec) {
    const ago = Math.round(Math.abs(sec));
    if (ago === 0) return "now";
    if (ago < 120) return `\u2212${ago} s`;
    return `\u2212${Math.round(ago / 60)} min`;
  }
  function fmtAnswer(a) {
    if (a === true) return "yes";
    if (a === false) return "no";
    if (a === null || a === void 0 || a === "") return "\u2014";
    return String(a);
  }
  function fmtConfidence(c) {
    return isNum(c) ? fmtPct(c, 1) : "\u2014";
  }
  function fmtRadius(r) {
    if (r === null) return "\u221E";
    return isNum(r) ? String(r) : "\u2014";
  }
  function plural(n, noun) {
    return `${fmtInt(n)} ${noun}${n === 1 ? "" : "s"}`;
  }
  function reloadInWords(bundle, reloads) {
    const id = bundle?.id ? ` \xB7 bundle ${bundle.id.slice(0, 12)}` : "";
    const at = bundle?.loaded_at;
    if (reloads === 0 || !at) return id;
    return `${id}, reloaded at ${fmtClock(at)} (${plural(reloads, "reload")})`;
  }
  function calibrationInWords(q) {
    const alpha = isNum(q.alpha) ? ` \xB7 \u03B1 ${fmtPct(q.alpha, 1)}` : "";
    if (q.table_threshold !== void 0) {
      const own = isNum(q.table_threshold) ? `table's own ${fmtPct(q.table_threshold)}` : "uncalibrated for the table alone";
      return isNum(q.threshold) ? `threshold in force ${fmtPct(q.threshold)} (both tiers) \xB7 ${own}${alpha}` : `uncalibrated: never certified \xB7 ${own}`;
    }
    if (!isNum(q.threshold)) return "uncalibrated: never certified";
    return `threshold ${fmtPct(q.threshold)}${alpha}`;
  }
  function elapsedTicks(splits) {
    const step = splits.length > 1 ? Math.min(...splits.slice(1).map((s, i) => s - splits[i])) : 1;
    if (step >= 1 && splits.every((s) => Math.abs(s - Math.round(s)) < 1e-6)) {
      return splits.map((s) => `${Math.round(s)} min`);
    }
    const clock = splits.map((s) => {
      const seconds = Math.round(s * 60);
      return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
    });
    return new Set(clock).size === clock.length ? clock : splits.map((s) => `${(s * 60).toFixed(1)} s`);
  }

  // static/dashboard/cards/badge.ts
  function verdictBadge(certified) {
    return certified ? h("span", {
      class: "badge certified"
    }, "\u2713 certified") : h("span", {
      class: "badge deferred"
    }, "\u21AA to model");
  }
  function stateBadge(kind, label) {
    return h("span", {
      class: `badge ${kind}`
    }, label);
  }

  // static/dashboard/cards/drift.ts
  function evidenceShare(evidence, level) {
    return Math.min(1, Math.max(0, Math.log(Math.max(evidence, 1)) / Math.log(level)));
  }
  function driftRow(name, d) {
    const alarmed = d.status === "alarmed";
    const level = isNum(d.alarm_level) && d.alarm_level > 1 ? d.alarm_level : 100;
    const evidence = isNum(d.evidence) ? d.evidence : 0;
    const since = d.since ? ` since ${fmtClock(d.since)} (${fmtAgo(d.since)})` : "";
    const note = alarmed ? `Certification withheld${since}. Raised at request ${fmtInt(d.alarmed_at)}.` : `${fmtInt(d.observed)} requests watched${since}.`;
    return h("li", {
      "data-drift": name,
      "data-status": d.status
    }, h("div", {
      class: "row-head"
    }, h("span", {
      class: "name"
    }, name), alarmed ? stateBadge("alarmed", "\u25B2 alarmed") : stateBadge("quiet", "\u25CF quiet")), h("div", {
      class: `bar evidence${alarmed ? " alarmed" : ""}`,
      role: "meter",
      "aria-label": `${name}: evidence of drift, ${fmtEvidence(evidence)} of alarm level ${level}`,
      "aria-valuemin": 1,
      "aria-valuemax": level,
      "aria-valuenow": Math.min(level, Math.max(1, evidence)).toFixed(2)
    }, h("span", {
      style: widthOf(evidenceShare(evidence, level))
    })), h("p", {
      class: "row-note"
    }, `Evidence ${fmtEvidence(evidence)} of ${fmtInt(level)} to alarm \xB7 ${note} ${plural(d.alarms, "alarm")}, ${fmtInt(d.clears)} cleared.`));
  }
  function renderDrift(st) {
    const drift = Object.entries(st.drift ?? {});
    const box = byId("drift");
    if (!drift.length) {
      box.replaceChildren(h("p", {
        class: "empty"
      }, "This bundle has no drift guard."));
      return;
    }
    box.replaceChildren(h("ul", {
      class: "rows cols"
    }, drift.map(([n, d]) => driftRow(n, d))));
  }

  // static/dashboard/cards/header.ts
  function showStatus(state, text) {
    byId("status").dataset.state = state;
    setText("status-text", text);
  }
  function renderHeader(st) {
    const questions = st.bundle?.questions ?? [];
    const load = isNum(st.bundle?.load_ms) ? ` \xB7 loaded in ${fmtLatency(st.bundle.load_ms * 1e3)}` : "";
    const served = `${st.bundle?.path ?? "?"} \xB7 ${plural(questions.length, "question")}${load}${reloadInWords(st.bundle, st.reloads?.count ?? 0)}`;
    setText("bundle-path", st.learn === void 0 ? served : questions.length === 0 ? `Learning in ${st.learn.dir} \xB7 no bundle yet: every answer goes to your model until a retrain calibrates one` : `Learning in ${st.learn.dir} \xB7 serving ${served}`);
    const since = st.bundle?.loaded_at;
    setText("questions-since", (st.reloads?.count ?? 0) > 0 && since ? `Since the bundle was reloaded at ${fmtClock(since)}.` : "");
    setText("footer-uptime", `Up ${fmtDuration(st.uptime_s)}, since ${new Date(st.started_at).toLocaleString()}.` + (st.keep_text ? " Recent texts are kept (--keep-text)." : " Raw texts are not kept."));
  }

  // static/dashboard/cards/kpis.ts
  function renderKpis(st) {
    const c = st.counts;
    const share = st.share_answered;
    setText("share", fmtPct(share));
    byId("share-bar").style.width = isNum(share) ? `${(share * 100).toFixed(2)}%` : "0";
    setText("share-sub", c.answers ? `${fmtInt(c.certified)} of ${fmtInt(c.answers)} answers certified; ${fmtInt(c.deferred)} went to the model` : "No answers yet: the share appears with the first decision.");
    setText("answers-count", fmtInt(c.answers));
    setText("answers-sub", `answers in ${plural(c.requests, "request")} \xB7 ${plural(c.errors, "error")} \xB7 ${fmtInt(c.playground)} playground`);
    byId("rate").replaceChildren(fmtRate(st.rate?.requests_per_s), h("small", null, "req/s"));
    const lat = st.latency_us;
    setText("latency-p50", fmtLatency(lat?.p50));
    setText("latency-sub", lat?.count ? `median \xB7 p90 ${fmtLatency(lat.p90)} \xB7 p99 ${fmtLatency(lat.p99)} \xB7 max ${fmtLatency(lat.max)}` : "no requests measured yet");
    renderSavings(st);
    byId("empty-banner").hidden = c.requests > 0;
  }
  function savingsFigure(id, figure, flag) {
    const el = byId(id);
    if (figure === null) {
      el.className = "big unset";
      el.replaceChildren("Start the server with ", h("code", null, flag), " to see it.");
    } else {
      el.className = "big";
      el.replaceChildren(figure);
    }
  }
  function renderSavings(st) {
    const sv = st.savings;
    const calls = plural(sv.calls_saved, "model call");
    const latencyKnown = isNum(sv.llm_latency_ms);
    savingsFigure("time-saved", latencyKnown ? fmtDurationShort(sv.time_saved_s ?? 0) : null, "--llm-latency-ms");
    setText("time-sub", latencyKnown ? `${calls} of ${fmtInt(sv.llm_latency_ms)} ms avoided` : `${calls} saved so far.`);
    const costKnown = isNum(sv.cost_per_call);
    savingsFigure("money-saved", costKnown ? fmtMoney(sv.money_saved ?? 0) : null, "--cost-per-call");
    setText("money-sub", costKnown ? `${calls} at ${fmtMoney(sv.cost_per_call)} each, in your currency` : `${calls} saved so far.`);
  }

  // static/dashboard/uplot_chart.ts
  function palette() {
    const style = getComputedStyle(document.documentElement);
    const v = (name) => style.getPropertyValue(name).trim();
    return {
      muted: v("--muted"),
      line: v("--line"),
      p50: v("--p50"),
      p99: v("--p99"),
      rate: v("--rate"),
      font: `11px ${getComputedStyle(document.body).fontFamily}`
    };
  }
  function withAlpha(colour, alpha) {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour);
    if (!m) return colour;
    const [r, g, b] = [
      m[1],
      m[2],
      m[3]
    ].map((x) => parseInt(x ?? "0", 16));
    return `rgba(${r}, ${g}, ${b}, ${alpha})`;
  }
  var FittedChart = class {
    #plot = null;
    #data = null;
    #box;
    #options;
    /** A chart in `box`, built by `options` for the current colours and size. */
    constructor(box, options) {
      this.#box = box;
      this.#options = options;
      new ResizeObserver(() => this.#fit()).observe(box);
      matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => this.#rebuild());
    }
    /** Draws `data`, building the chart on first use. */
    draw(data) {
      this.#data = data;
      if (this.#plot) this.#plot.setData(data);
      else this.#rebuild();
    }
    /** Whether a chart is on the page. */
    get drawn() {
      return this.#plot !== null;
    }
    /** Removes the chart (until the next `draw`). */
    clear() {
      this.#plot?.destroy();
      this.#plot = null;
      this.#data = null;
    }
    #size() {
      return {
        width: Math.max(100, Math.floor(this.#box.clientWidth)),
        height: Math.max(20, Math.floor(this.#box.clientHeight))
      };
    }
    #rebuild() {
      this.#plot?.destroy();
      this.#plot = null;
      if (!this.#data) return;
      const { width, height } = this.#size();
      this.#plot = new uPlot(this.#options(palette(), width, height), this.#data, this.#box);
    }
    #fit() {
      const plot = this.#plot;
      if (!plot) return;
      const size = this.#size();
      if (size.width !== plot.width || size.height !== plot.height) {
        plot.setSize(size);
      }
    }
  };

  // static/dashboard/cards/learn.ts
  var chart = null;
  function chartIn(box) {
    chart ??= new FittedChart(box, (p, width, height) => ({
      width,
      height,
      legend: {
        show: false
      },
      cursor: {
        y: false,
        drag: {
          x: false,
          y: false
        }
      },
      scales: {
        x: {
          time: false
        },
        y: {
          range: [
            0,
            100
          ]
        }
      },
      axes: [
        {
          stroke: p.muted,
          font: p.font,
          grid: {
            stroke: p.line,
            width: 1
          },
          ticks: {
            show: false
          },
          size: 24,
          values: (_u, splits) => elapsedTicks(splits)
        },
        {
          stroke: p.muted,
          font: p.font,
          grid: {
            stroke: p.line,
            width: 1
          },
          ticks: {
            show: false
          },
          size: 40,
          values: (_u, splits) => splits.map((s) => `${s}%`)
        }
      ],
      series: [
        {
          label: "minutes"
        },
        {
          label: "certified",
          stroke: p.p50,
          width: 2,
          points: {
            show: false
          }
        },
        {
          label: "calls saved",
          stroke: p.rate,
          width: 2,
          dash: [
            5 * devicePixelRatio,
            4 * devicePixelRatio
          ],
          points: {
            show: false
          }
        }
      ]
    }));
    return chart;
  }
  function about(seconds) {
    if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
    if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
    return `about ${(seconds / 3600).toFixed(1)} h`;
  }
  function renderLearn(st) {
    const card = byId("card-learn");
    const l = st.learn;
    card.hidden = l === void 0;
    if (l === void 0) return;
    const grid = card.parentElement;
    if (grid !== null && grid.firstElementChild !== card) grid.prepend(card);
    const alphas = [
      ...new Set(st.bundle.questions.map((q) => q.alpha).filter((a) => a !== null))
    ];
    const bound = alphas.length === 0 ? "nothing certified yet: every answer goes to the model" : `certified answers disagree with the model at most ${alphas.map((a) => fmtPct(a)).join(" / ")} of the time (with 95% confidence, on traffic like the calibration part)`;
    const last = l.history.at(-1);
    const decisions = l.series.reduce((n, p) => n + p.decisions, 0);
    const calls = l.series.reduce((n, p) => n + p.calls, 0);
    const eta = l.next_retrain_in_s === null || l.next_retrain_in_s === void 0 ? "" : ` (${about(l.next_retrain_in_s)} at ${l.labels_per_s} labels a second)`;
    const advice = Object.entries(l.advice ?? {}).map(([q, n]) => {
      const { low: lo, high: hi } = n.more_labels;
      if (hi === 0) {
        return `${q}: the labels the learning curve last asked for have come; the next retrain reads it again`;
      }
      const labels = hi === null ? `over ${fmtInt(lo)} more labels` : `about ${fmtInt(lo)}-${fmtInt(hi)} more labels`;
      const minutes = n.minutes === null ? "" : `, ${n.minutes.high === null ? `over ${fmtInt(n.minutes.low)}` : `${fmtInt(n.minutes.low)}-${fmtInt(n.minutes.high)}`} min at the current pace`;
      return `${q}: ${labels}${minutes}`;
    });
    const fleet = l.fleet;
    const shares = Object.entries(fleet?.replicas ?? {}).map(([r, x]) => `${r} ${fmtInt(x.labels)} labels, ${fmtInt(x.picks_answered)} of ${fmtInt(x.picked)} picks answered`);
    byId("learn-summary").replaceChildren(...fleet === void 0 ? [] : [
      h("p", {
        class: "sub",
        id: "learn-fleet"
      }, `Fleet: ${l.learner ? `this replica (${fleet.replica}) learns` : fleet.learner === null ? "no learner has written for 30 s (the store, or a takeover)" : `${fleet.learner} learns (lease ${fleet.lease}); this is ${fleet.replica}`}${fleet.bundle === null ? "" : ` \xB7 fleet bundle version ${fleet.bundle.version} from ${fleet.bundle.replica}`}${fleet.outbox.waiting > 0 ? ` \xB7 ${fmtInt(fleet.outbox.waiting)} chunks wait for the store` : ""}${shares.length === 0 ? "" : ` \xB7 ${shares.join("; ")}`}.`)
    ], h("p", {
      class: "sub"
    }, `${fmtInt(l.labels)} labels \xB7 next retrain at ${fmtInt(l.next_retrain_at)}${eta}${l.running ? " \xB7 retraining now" : ""} \xB7 ${fmtInt(l.retrains)} retrains, ${fmtInt(l.swaps)} swapped in`), h("p", {
      class: "sub",
      id: "learn-saved"
    }, decisions === 0 ? "No decisions yet." : `Model calls saved so far: ${fmtInt(decisions - calls)} of ${fmtInt(decisions)} decisions (${fmtPct((decisions - calls) / decisions)}).`), h("p", {
      class: "sub"
    }, `Bound: ${bound}.`), ...advice.length === 0 ? [] : [
      h("p", {
        class: "sub",
        id: "learn-advice"
      }, `Until a question is calibrated every answer goes to the model; what would help: ${advice.join("; ")} (learning curve).`)
    ], ...l.held.length > 0 ? [
      h("p", {
        class: "sub"
      }, `Held (the model answers options not learned yet): ${l.held.join(", ")}.`)
    ] : [], ...l.unlearned.length > 0 ? [
      h("p", {
        class: "sub"
      }, `Not learned yet: ${l.unlearned.join(", ")}.`)
    ] : [], ...last === void 0 ? [] : [
      h("p", {
        class: "sub"
      }, `Last retrain ${fmtClock(last.ended)}, on ${fmtInt(last.labels)} labels: ${last.swapped ? "swapped in" : "kept the bundle in force"} (${last.reason}).`)
    ]);
    const points = l.series.filter((p) => p.decisions > 0);
    const box = byId("learn-chart");
    if (points.length < 2) return;
    const start = Date.parse(points[0].from);
    chartIn(box).draw([
      points.map((p) => (Date.parse(p.to) - start) / 6e4),
      points.map((p) => 100 * p.certified / p.decisions),
      points.map((p) => 100 * (p.decisions - p.calls) / p.decisions)
    ]);
    const end = points.at(-1);
    box.setAttribute("aria-label", `Certified share and model calls saved per stretch since the start: ${fmtPct(end.certified / end.decisions)} certified and ${fmtPct((end.decisions - end.calls) / end.decisions)} of calls saved in the last stretch`);
  }

  // static/dashboard/cards/live.ts
  var LIVE_BADGES = {
    bundle: [
      "quiet",
      "\u25CF bundle's threshold"
    ],
    live_lower: [
      "quiet",
      "\u25BC lowered by audits"
    ],
    live_stricter: [
      "alarmed",
      "\u25B2 raised by audits"
    ],
    withdrawn: [
      "alarmed",
      "\u25A0 withdrawn"
    ],
    uncalibrated: [
      "quiet",
      "\u25CB uncalibrated"
    ]
  };
  function renderLive(st) {
    const live = st.live;
    renderSuspect(st);
    renderIdless(st);
    const box = byId("live");
    if (!live) {
      box.replaceChildren(h("p", {
        class: "empty"
      }, "This server has no live certificate."));
      return;
    }
    if (!live.enabled) {
      box.replaceChildren(h("p", {
        class: "empty"
      }, "Off: no certified answer is audited (serve --audit-rate 0)."));
      return;
    }
    const list = h("ul", {
      class: "rows cols"
    });
    for (const [name, q] of Object.entries(live.questions ?? {})) {
      const [kind, label] = LIVE_BADGES[q.reason] ?? [
        "quiet",
        q.reason
      ];
      const check = q.feedback_check ?? null;
      const suspect = check?.status === "suspect";
      list.append(h("li", {
        "data-live": name,
        "data-reason": q.reason,
        "data-feedback": check === null ? "unchecked" : check.status
      }, h("div", {
        class: "row-head"
      }, h("span", {
        class: "name"
      }, name), stateBadge(kind, label), ...suspect ? [
        stateBadge("alarmed", "\u26A0 suspect feedback")
      ] : []), h("p", {
        class: "row-note"
      }, q.summary), ...check === null || suspect ? [] : [
        h("p", {
          class: "muted small"
        }, `Feedback check: ${check.summary}.`)
      ]));
    }
    const resets = live.resets;
    const lastReset = resets?.last.at(-1);
    box.replaceChildren(list, h("p", {
      class: "muted small"
    }, `Audits ${fmtPct(live.audit_rate)} of certified answers \xB7 ${fmtInt(live.pending_audits)} waiting for the model's answer (at most ${fmtInt(live.pending_capacity)}, for ${fmtDurationShort(live.audit_ttl_s)}) \xB7 ${fmtInt(live.audits_dropped)} dropped unanswered.${resets === void 0 || lastReset === void 0 ? "" : ` Live evidence reset ${fmtInt(resets.total)} time${resets.total === 1 ? "" : "s"}, last at ${new Date(lastReset.at).toLocaleString()} (${lastReset.question ?? "every question"}).`}`));
  }
  function renderSuspect(st) {
    const suspect = Object.entries(st.live?.questions ?? {}).filter(([, q]) => q.feedback_check?.status === "suspect");
    const banner = byId("feedback-banner");
    banner.hidden = suspect.length === 0;
    if (suspect.length === 0) return;
    const words = suspect.map(([name, q]) => {
      const c = q.feedback_check;
      return c.disagrees_too_much ? `${name}: the model's answers disagree with the table far more than calibration allows (a proxy that lies, or a model that changed); the disagreements count, so certification moves stricter and may be withdrawn` : `${name}: the model's answers agree with the table far more than calibration allows (a proxy that echoes the table); the threshold in force stays the bundle's or stricter`;
    });
    byId("feedback-banner-text").textContent = `${words.join(". ")}. Withholding is the safe side. Check what sends POST /v1/feedback, then reset the live evidence (POST /v1/live/reset).`;
  }
  function renderIdless(st) {
    const idless = st.live?.feedback_without_ids;
    const banner = byId("idless-banner");
    banner.hidden = idless === void 0 || idless.items === 0;
    if (idless === void 0 || idless.items === 0) return;
    byId("idless-banner-text").textContent = `${fmtInt(idless.items)} feedback items came without the feedback_id their answer carried. A label without its id is not known to answer the decision it picked to calibrate, so each picked one (about ${fmtInt(Math.max(1, Math.round(idless.picks_expected)))} so far) counts as a disagreement where the next bundle would certify it, and it certifies less. Send back the feedback_id (or audit) of each answer with the model's answer.`;
  }

  // static/dashboard/cards/questions.ts
  function flagsInWords(flags) {
    const list = Object.entries(flags ?? {}).filter(([, n]) => n > 0);
    if (!list.length) return "";
    list.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return ` \xB7 to model: ${list.map(([f, n]) => `${f} ${fmtInt(n)}`).join(", ")}`;
  }
  function renderQuestions(st) {
    const questions = st.bundle?.questions ?? [];
    const list = h("ul", {
      class: "rows"
    });
    for (const q of questions) {
      const pq = st.per_question?.[q.name] ?? {
        answers: 0,
        certified: 0,
        share_answered: null
      };
      const share = pq.share_answered;
      const kind = q.kind === "yes_no" ? "yes/no" : `choice of ${q.options.length}`;
      const calibration = calibrationInWords(q);
      list.append(h("li", {
        "data-question": q.name
      }, h("div", {
        class: "row-head"
      }, h("span", {
        class: "name"
      }, q.name, " ", h("span", {
        class: "muted small"
      }, kind)), h("span", {
        class: "value"
      }, fmtPct(share))), h("div", {
        class: "bar",
        role: "meter",
        "aria-label": `${q.name}: share certified`,
        "aria-valuemin": 0,
        "aria-valuemax": 100,
        "aria-valuenow": isNum(share) ? (share * 100).toFixed(1) : 0
      }, h("span", {
        style: widthOf(isNum(share) ? share : 0)
      })), h("p", {
        class: "row-note"
      }, pq.answers ? `${fmtInt(pq.certified)} of ${fmtInt(pq.answers)} certified \xB7 ${calibration}${flagsInWords(pq.flags)}` : (st.reloads?.count ?? 0) > 0 && st.bundle?.loaded_at ? `no answers since this bundle began serving at ${fmtClock(st.bundle.loaded_at)} \xB7 ${calibration}` : `no answers yet \xB7 ${calibration}`)));
    }
    byId("questions").replaceChildren(questions.length ? list : h("p", {
      class: "empty"
    }, "The bundle lists no questions."));
  }

  // static/dashboard/cards/tiers.ts
  function renderTiers(st) {
    const card = byId("card-tiers");
    const t = st.tiers;
    card.hidden = t === void 0;
    if (t === void 0) return;
    const row = (key, name, c, extra) => h("li", {
      "data-tier": key
    }, h("div", {
      class: "row-head"
    }, h("span", {
      class: "name"
    }, name), h("span", {
      class: "num"
    }, `${fmtInt(c.certified)} of ${fmtInt(c.answers)} certified (${fmtPct(c.share_answered)})`)), h("p", {
      class: "sub"
    }, `latency p50 ${fmtLatency(c.latency_us.p50)}, p99 ${fmtLatency(c.latency_us.p99)}${extra}`));
    const s = t.semantic;
    byId("tiers").replaceChildren(h("ul", {
      class: "rows"
    }, row("table", "Table", t.table, ""), row("semantic", "Second tier (sentence encoder)", s, ` \xB7 asked ${fmtInt(s.asked)}, novel ${fmtInt(s.novel)}, shed ${fmtInt(s.shed)}, failed ${fmtInt(s.failed)} \xB7 queue ${fmtInt(t.in_flight)} of ${fmtInt(t.queue)} on ${fmtInt(t.workers)} workers`)));
  }

  // static/dashboard/cards/reasons.ts
  var FLAG_INFO = {
    low_confidence: "Confidence below the calibrated threshold.",
    drift: "Withheld by a rule about the text or the traffic (the out-of-scope rule, the novelty guard, the drift guard's alarm, or the live audits).",
    low_radius: "Exposed input that a few inserted words could flip.",
    uncalibrated: "The question has no calibrated threshold, so it is never certified.",
    unsupported: "A question the bundle does not know, or of type score.",
    empty_input: "Empty text; an empty message is never served.",
    options_changed: "The request offered an option the table never learned.",
    option_removed: "The best answer over all options was removed by the request.",
    new_options_served: "Served by configuration despite a new option; not certified.",
    manual_threshold: "Served by a forced threshold; not certified."
  };
  var DRIFT_RULES = {
    out_of_scope: "the out-of-scope rule (a text asking for none of the options)",
    novelty: "the novelty guard (mostly words the table never saw)",
    alarm: "the drift guard's alarm (the stream drifted from calibration)",
    live_audit: "the live audits (certification withdrawn)"
  };
  function driftWords(rules) {
    const list = Object.entries(rules ?? {}).filter(([, n]) => n > 0);
    if (list.length === 0) return FLAG_INFO.drift;
    list.sort((a, b) => b[1] - a[1]);
    return `Withheld by ${list.map(([r, n]) => `${DRIFT_RULES[r] ?? r}: ${fmtInt(n)}`).join("; ")}.`;
  }
  function renderReasons(st) {
    const reasons = Object.entries(st.deferral_reasons ?? {}).filter(([, n]) => n > 0);
    reasons.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const total = reasons.reduce((sum, [, n]) => sum + n, 0);
    const box = byId("reasons");
    if (!reasons.length) {
      box.replaceChildren(h("p", {
        class: "empty"
      }, st.counts.answers ? "Every answer so far was certified: nothing went to the model." : "Nothing to explain yet: deferred answers and their reasons show here."));
      return;
    }
    const list = h("ul", {
      class: "rows"
    });
    for (const [flag, n] of reasons) {
      list.append(h("li", {
        "data-flag": flag
      }, h("div", {
        class: "row-head"
      }, h("span", {
        class: "name flag"
      }, flag), h("span", {
        class: "value"
      }, `${fmtInt(n)} `, h("span", {
        class: "muted small"
      }, fmtPct(n / total, 0)))), h("div", {
        class: "bar deferral",
        "aria-hidden": "true"
      }, h("span", {
        style: widthOf(n / total)
      })), h("p", {
        class: "row-note"
      }, flag === "drift" ? driftWords(st.drift_rules) : FLAG_INFO[flag] ?? "")));
    }
    box.replaceChildren(list);
  }

  // static/dashboard/cards/recent.ts
  var ROWS = 30;
  var COLUMNS = [
    [
      "Time",
      ""
    ],
    [
      "Route",
      ""
    ],
    [
      "Question",
      ""
    ],
    [
      "Answer",
      ""
    ],
    [
      "Confidence",
      "num"
    ],
    [
      "Verdict",
      ""
    ],
    [
      "Flag",
      ""
    ],
    [
      "Radius",
      "num"
    ]
  ];
  function cells(r, keepText) {
    const row = [
      h("td", {
        class: "c-time time",
        title: r.at
      }, fmtClock(r.at)),
      h("td", {
        class: "c-route mono small"
      }, r.route ?? ""),
      h("td", {
        class: "c-q"
      }, r.question ?? ""),
      h("td", {
        class: "c-ans"
      }, fmtAnswer(r.answer)),
      h("td", {
        class: "c-conf num"
      }, fmtConfidence(r.confidence)),
      h("td", {
        class: "c-verdict"
      }, verdictBadge(!!r.certified)),
      h("td", {
        class: "c-flag flag"
      }, r.flag || "\u2014"),
      h("td", {
        class: "c-radius num",
        title: r.radius === null ? "no number of inserted words can flip it" : null
      }, fmtRadius(r.radius)),
      // Shown instead of time, route, flag and radius on narrow screens.
      h("td", {
        class: "c-meta",
        "aria-hidden": "true"
      }, [
        fmtClock(r.at),
        r.route ?? "",
        r.flag ?? "",
        `radius ${fmtRadius(r.radius)}`
      ].filter(Boolean).join(" \xB7 "))
    ];
    if (keepText) {
      row.push(h("td", {
        class: "c-text text"
      }, typeof r.text === "string" ? r.text : ""));
    }
    return row;
  }
  var RecentCard = class {
    #seen = /* @__PURE__ */ new Set();
    #first = true;
    /** Fills the card from `st`. */
    render(st) {
      const keepText = !!st.keep_text;
      const shown = [
        ...st.recent ?? []
      ].sort((a, b) => String(b.at).localeCompare(String(a.at))).slice(0, ROWS);
      const table = byId("recent", HTMLTableElement);
      const columns2 = keepText ? [
        ...COLUMNS,
        [
          "Text",
          ""
        ]
      ] : COLUMNS;
      const headKey = columns2.map((c) => c[0]).join("|");
      if (table.dataset.head !== headKey) {
        table.tHead?.replaceChildren(h("tr", null, columns2.map(([label, cls]) => h("th", {
          scope: "col",
          class: cls || null
        }, label))));
        table.dataset.head = headKey;
      }
      const seen = /* @__PURE__ */ new Set();
      const rows = shown.map((r) => {
        const key = `${r.at}|${r.route}|${r.question}`;
        seen.add(key);
        const fresh = !this.#first && !this.#seen.has(key);
        return h("tr", {
          class: fresh ? "fresh" : null
        }, cells(r, keepText));
      });
      table.tBodies[0]?.replaceChildren(...rows);
      this.#seen = seen;
      this.#first = false;
      byId("recent-empty").hidden = shown.length > 0;
      table.hidden = shown.length === 0;
      setText("recent-note", shown.length ? `Newest first; ${shown.length} shown.${keepText ? "" : " Texts are not kept (start with --keep-text to see them)."} Radius: inserted words needed to flip the answer (\u221E: none can).` : "");
      if (!shown.length) {
        setText("recent-empty", "No decisions yet. Each answer the server gives appears here, newest first.");
      }
    }
  };

  // static/dashboard/scales.ts
  function decadeRange(min, max) {
    const d0 = Math.floor(Math.log10(min));
    let d1 = Math.ceil(Math.log10(max));
    if (d1 <= d0) d1 = d0 + 1;
    return [
      10 ** d0,
      10 ** d1
    ];
  }
  function decadeTicks(lo, hi) {
    const d0 = Math.round(Math.log10(lo));
    const d1 = Math.round(Math.log10(hi));
    const steps = d1 - d0 <= 2 ? [
      1,
      2,
      5
    ] : [
      1
    ];
    const ticks = [];
    for (let d = d0; d <= d1; d++) {
      for (const m of steps) {
        const v = m * 10 ** d;
        if (v <= hi * (1 + 1e-9)) ticks.push(Number(v.toPrecision(12)));
      }
    }
    return ticks;
  }
  function secondsTicks(min, max, count) {
    const span = Math.max(1, max - min);
    const steps = [
      1,
      2,
      5,
      10,
      15,
      20,
      30,
      60,
      120,
      300,
      600,
      1200,
      1800,
      3600
    ];
    const step = steps.find((s) => span / s <= Math.max(1, count)) ?? 3600;
    const ticks = [];
    for (let v = Math.floor(max / step) * step; v >= min - 1e-9; v -= step) {
      ticks.unshift(v);
    }
    return ticks;
  }

  // static/dashboard/charts.ts
  function columns(samples, keys, positive) {
    const last = samples.at(-1)?.t ?? 0;
    const xs = samples.map((s) => (s.t - last) / 1e3);
    const ys = keys.map((k) => samples.map((s) => {
      const v = s[k];
      return isNum(v) && (!positive || v > 0) ? v : null;
    }));
    return [
      xs,
      ...ys
    ];
  }
  var LatencyChart = class {
    #box;
    #legend;
    #chart;
    #message;
    #samples = [];
    /** A chart in `box`, with its legend's values in `legend`. */
    constructor(box, legend) {
      this.#box = box;
      this.#legend = legend;
      this.#message = h("p", {
        class: "empty"
      });
      box.append(this.#message);
      this.#chart = new FittedChart(box, (p, width, height) => ({
        width,
        height,
        legend: {
          show: false
        },
        cursor: {
          y: false,
          drag: {
            x: false,
            y: false
          },
          points: {
            size: 7
          }
        },
        scales: {
          x: {
            time: false,
            range: (_u, min, max) => [
              min,
              Math.max(max, min + 1)
            ]
          },
          y: {
            distr: 3,
            log: 10,
            range: (_u, min, max) => decadeRange(min, max)
          }
        },
        axes: [
          {
            stroke: p.muted,
            font: p.font,
            grid: {
              stroke: p.line,
              width: 1
            },
            ticks: {
              show: false
            },
            gap: 4,
            size: 24,
            splits: (u, _i, min, max) => secondsTicks(min, max, Math.floor(u.bbox.width / devicePixelRatio / 110)),
            values: (_u, splits) => splits.map(fmtSecondsAgo)
          },
          {
            stroke: p.muted,
            font: p.font,
            grid: {
              stroke: p.line,
              width: 1
            },
            ticks: {
              show: false
            },
            gap: 6,
            size: 56,
            splits: (_u, _i, min, max) => decadeTicks(min, max),
            filter: (_u, splits) => splits,
            values: (_u, splits) => splits.map(fmtLatencyTick)
          }
        ],
        series: [
          {
            label: "time"
          },
          {
            label: "p50",
            stroke: p.p50,
            width: 2,
            points: {
              show: false
            }
          },
          {
            label: "p99",
            stroke: p.p99,
            width: 2,
            dash: [
              5 * devicePixelRatio,
              4 * devicePixelRatio
            ],
            points: {
              show: false
            }
          }
        ],
        hooks: {
          setCursor: [
            (u) => this.#showLegend(u.cursor.idx ?? null)
          ]
        }
      }));
    }
    /** Plots `history`; until two samples have a figure, says why there is no line yet. */
    update(history2, hasTraffic) {
      const samples = history2.samples;
      this.#samples = samples;
      const usable = samples.filter((s) => isNum(s.p50) || isNum(s.p99));
      if (usable.length < 2) {
        this.#chart.clear();
        this.#message.hidden = false;
        this.#message.textContent = hasTraffic ? "Collecting samples; the chart draws from the second refresh on." : "No requests measured yet. The chart starts with the first decisions.";
        this.#box.removeAttribute("aria-label");
      } else {
        this.#message.hidden = true;
        this.#chart.draw(columns(samples, [
          "p50",
          "p99"
        ], true));
        const last = usable.at(-1);
        const span = Math.round((samples.at(-1).t - samples[0].t) / 1e3);
        this.#box.setAttribute("aria-label", `Latency over the last ${span} s, log scale: p50 ${fmtLatency(last.p50)}, p99 ${fmtLatency(last.p99)} at the latest sample`);
      }
      this.#box.dataset.samples = String(usable.length);
      this.#showLegend(null);
    }
    #showLegend(idx) {
      const s = (idx === null ? null : this.#samples[idx]) ?? this.#samples.at(-1);
      const p50 = fmtLatency(s?.p50);
      const p99 = fmtLatency(s?.p99);
      if (this.#legend.p50.textContent !== p50) {
        this.#legend.p50.textContent = p50;
      }
      if (this.#legend.p99.textContent !== p99) {
        this.#legend.p99.textContent = p99;
      }
    }
  };
  var RateSpark = class {
    #chart;
    /** A sparkline filling `box`. */
    constructor(box) {
      this.#chart = new FittedChart(box, (p, width, height) => ({
        width,
        height,
        legend: {
          show: false
        },
        cursor: {
          show: false
        },
        padding: [
          2,
          1,
          0,
          1
        ],
        scales: {
          x: {
            time: false
          },
          y: {
            range: (_u, _min, max) => [
              0,
              max > 0 ? max : 1
            ]
          }
        },
        axes: [
          {
            show: false
          },
          {
            show: false
          }
        ],
        series: [
          {},
          {
            stroke: p.rate,
            width: 2,
            fill: withAlpha(p.rate, 0.18),
            points: {
              show: false
            }
          }
        ]
      }));
    }
    /** Plots the rate of `history`; nothing until two samples have one. */
    update(history2) {
      const samples = history2.samples.filter((s) => isNum(s.rate));
      if (samples.length < 2) this.#chart.clear();
      else this.#chart.draw(columns(samples, [
        "rate"
      ], false));
    }
  };

  // static/dashboard/history.ts
  var SampleHistory = class {
    capacity;
    samples;
    /** Keeps at most `capacity` samples (180 at one per 2 s: six minutes). */
    constructor(capacity = 180) {
      this.capacity = capacity;
      this.samples = [];
    }
    /**
     * Adds the figures of `stats`, received at `now`. The latency follows the
     * recent window (`latency_us_recent`); a server without it gives its
     * figures since start.
     */
    add(stats, now = Date.now()) {
      const latency2 = stats.latency_us_recent ?? stats.latency_us;
      this.samples.push({
        t: now,
        p50: isNum(latency2?.p50) ? latency2.p50 : null,
        p99: isNum(latency2?.p99) ? latency2.p99 : null,
        rate: isNum(stats.rate?.requests_per_s) ? stats.rate.requests_per_s : null
      });
      if (this.samples.length > this.capacity) {
        this.samples.splice(0, this.samples.length - this.capacity);
      }
    }
    /** The newest sample, or null before the first. */
    latest() {
      return this.samples.at(-1) ?? null;
    }
  };

  // static/dashboard/api.ts
  function apiUrl(path) {
    return new URL(path, location.origin).href;
  }
  async function requestJson(path, options = {}) {
    const post = "body" in options;
    const res = await fetch(apiUrl(path), {
      method: post ? "POST" : "GET",
      credentials: "same-origin",
      cache: "no-store",
      headers: post ? {
        "content-type": "application/json",
        accept: "application/json"
      } : {
        accept: "application/json"
      },
      ...post ? {
        body: JSON.stringify(options.body)
      } : {},
      ...options.signal ? {
        signal: options.signal
      } : {}
    });
    let body = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    return {
      status: res.status,
      ok: res.ok,
      body
    };
  }

  // static/dashboard/playground.ts
  function radiusInWords(radius) {
    if (radius === null) return "no number of inserted words can flip it";
    if (!isNum(radius)) return "\u2014";
    return `${radius} inserted word${radius === 1 ? "" : "s"} could flip it`;
  }
  function confidenceMeter(r) {
    const threshold = isNum(r.threshold) ? r.threshold : null;
    const confidence = isNum(r.confidence) ? r.confidence : 0;
    return h("div", {
      class: `bar${r.certified ? "" : " deferral"}${threshold === null ? "" : " with-tick"}`,
      role: "meter",
      "aria-label": "Confidence against the threshold",
      "aria-valuemin": 0,
      "aria-valuemax": 100,
      "aria-valuenow": (confidence * 100).toFixed(1)
    }, h("span", {
      style: widthOf(confidence)
    }), threshold === null ? null : h("i", {
      class: "tick",
      style: `left:calc(${(threshold * 100).toFixed(2)}% - 1px)`
    }));
  }
  function facts(r) {
    return h("dl", {
      class: "pg-facts"
    }, h("dt", null, "Confidence"), h("dd", {
      id: "pg-confidence"
    }, fmtConfidence(r.confidence)), h("dt", null, "Threshold"), h("dd", null, isNum(r.threshold) ? fmtPct(r.threshold) : "none: the question is not calibrated"), h("dt", null, "Alpha"), h("dd", null, isNum(r.alpha) ? `${fmtPct(r.alpha)}: certified answers disagree with the model at most this often` : "\u2014"), h("dt", null, "Flag"), h("dd", {
      class: "flag"
    }, r.flag || "none"), h("dt", null, "Radius"), h("dd", null, radiusInWords(r.radius)));
  }
  function topOptions(r) {
    const top = Array.isArray(r.top) ? r.top.slice(0, 3) : [];
    if (!top.length) return null;
    const yesNo = typeof r.answer === "boolean";
    const label = (o) => yesNo && (o === "true" || o === "false") ? fmtAnswer(o === "true") : fmtAnswer(o);
    const list = h("ul", {
      class: "rows"
    });
    for (const t of top) {
      const p = isNum(t.probability) ? t.probability : 0;
      list.append(h("li", null, h("div", {
        class: "row-head"
      }, h("span", {
        class: "name"
      }, label(t.option)), h("span", {
        class: "value"
      }, fmtPct(p))), h("div", {
        class: "bar",
        "aria-hidden": "true"
      }, h("span", {
        style: widthOf(p)
      }))));
    }
    return h("div", {
      class: "pg-top"
    }, h("h3", null, "Top options"), list);
  }
  function showReply(r) {
    const top = topOptions(r);
    byId("pg-result").replaceChildren(h("div", {
      class: "pg-answer"
    }, h("p", {
      class: "big",
      id: "pg-answer"
    }, fmtAnswer(r.answer)), verdictBadge(!!r.certified)), confidenceMeter(r), h("p", {
      class: "pg-reason",
      id: "pg-reason"
    }, r.reason || ""), facts(r), ...top ? [
      top
    ] : []);
  }
  function showError(message) {
    byId("pg-result").replaceChildren(h("p", {
      class: "pg-error",
      role: "alert"
    }, message));
  }
  function errorOf(body) {
    if (typeof body !== "object" || body === null || !("error" in body)) {
      return null;
    }
    return typeof body.error === "string" && body.error ? body.error : null;
  }
  async function ask() {
    const button = byId("pg-submit", HTMLButtonElement);
    const question = byId("pg-question", HTMLSelectElement).value;
    const body = {
      text: byId("pg-text", HTMLTextAreaElement).value
    };
    if (question) body.question = question;
    button.disabled = true;
    button.textContent = "Asking\u2026";
    try {
      const reply = await requestJson("/v1/playground", {
        body
      });
      const error = errorOf(reply.body);
      if (!reply.ok || reply.body === null || error !== null) {
        showError(error ?? `The server answered ${reply.status}.`);
      } else {
        showReply(reply.body);
      }
    } catch {
      showError("Cannot reach the server. Try again in a moment.");
    } finally {
      button.disabled = false;
      button.textContent = "Ask the table";
    }
  }
  function startPlayground() {
    const form = byId("pg-form", HTMLFormElement);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      ask();
    });
    byId("pg-text", HTMLTextAreaElement).addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        form.requestSubmit();
      }
    });
  }
  var QuestionPicker = class {
    #key = "";
    /** Lists the questions of `st`'s bundle, when they changed. */
    render(st) {
      const questions = st.bundle?.questions ?? [];
      const key = questions.map((q) => q.name).join("\0");
      if (key === this.#key) return;
      this.#key = key;
      const select = byId("pg-question", HTMLSelectElement);
      const previous = select.value;
      select.replaceChildren(...questions.map((q) => h("option", {
        value: q.name
      }, `${q.name} (${q.kind === "yes_no" ? "yes/no" : `${q.options.length} options`})`)));
      if (questions.some((q) => q.name === previous)) select.value = previous;
    }
  };

  // static/dashboard/poll.ts
  var DEFAULTS = {
    intervalMs: 2e3,
    retryMs: 4e3,
    timeoutMs: 8e3
  };
  function startPolling(options) {
    const o = {
      ...DEFAULTS,
      ...options
    };
    let timer = 0;
    let inFlight = false;
    let lastOk = 0;
    const schedule = (ms) => {
      clearTimeout(timer);
      if (!document.hidden) timer = setTimeout(poll, ms);
    };
    async function poll() {
      if (inFlight) return;
      inFlight = true;
      const abort = new AbortController();
      const kill = setTimeout(() => abort.abort(), o.timeoutMs);
      let next = o.intervalMs;
      let stats = null;
      try {
        const reply = await requestJson("/v1/stats", {
          signal: abort.signal
        });
        if (reply.status === 401 || reply.status === 403) {
          o.onStatus("auth", "Sign-in needed: reload the page and enter the token as the password");
          next = o.retryMs * 2;
        } else if (!reply.ok || reply.body === null) {
          o.onStatus("error", `The server answered ${reply.status}; retrying`);
          next = o.retryMs;
        } else {
          stats = reply.body;
        }
      } catch {
        const when = lastOk ? ` (last update ${new Date(lastOk).toLocaleTimeString()})` : "";
        o.onStatus("error", `Cannot reach the server; retrying${when}`);
        next = o.retryMs;
      } finally {
        clearTimeout(kill);
      }
      try {
        if (stats !== null) {
          o.onStats(stats);
          lastOk = Date.now();
          o.onStatus("live", `Live \xB7 updated ${(/* @__PURE__ */ new Date()).toLocaleTimeString()}`);
        }
      } finally {
        inFlight = false;
        schedule(next);
      }
    }
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) clearTimeout(timer);
      else poll();
    });
    poll();
  }

  // static/dashboard/main.ts
  var history = new SampleHistory();
  var latency = new LatencyChart(byId("latency-chart"), {
    p50: byId("lg-p50"),
    p99: byId("lg-p99")
  });
  var rate = new RateSpark(byId("rate-spark"));
  var recent = new RecentCard();
  var picker = new QuestionPicker();
  function show(st) {
    history.add(st);
    renderHeader(st);
    renderKpis(st);
    renderQuestions(st);
    renderReasons(st);
    renderDrift(st);
    renderLive(st);
    renderTiers(st);
    renderLearn(st);
    recent.render(st);
    picker.render(st);
    latency.update(history, (st.latency_us?.count ?? 0) > 0);
    rate.update(history);
  }
  byId("empty-example").textContent = `curl -s ${location.origin}/v1/decide \\
  -H 'content-type: application/json' \\
  -d '{"state": "I lost my card, what now?"}'`;
  startPlayground();
  startPolling({
    onStats: show,
    onStatus: showStatus
  });
})();
