// Decision table dashboard: polls GET /v1/stats and renders it; the
// playground card asks POST /v1/playground. Plain script, no dependencies.
// Everything that comes from the server is inserted as text, never as HTML.
"use strict";

(() => {
  const POLL_MS = 2000;
  const RETRY_MS = 4000;
  const HISTORY = 180; // samples kept for the charts (about 6 minutes)
  const RECENT_ROWS = 30;
  const SVG_NS = "http://www.w3.org/2000/svg";

  /** What each flag means, in words an operator can act on. */
  const FLAG_INFO = {
    low_confidence: "Confidence below the calibrated threshold.",
    drift:
      "The drift guard withheld certification: traffic looks unlike the calibration data.",
    low_radius: "Exposed input that a few inserted words could flip.",
    uncalibrated:
      "The question has no calibrated threshold, so it is never certified.",
    unsupported: "A question the bundle does not know, or of type score.",
    empty_input: "Empty text; an empty message is never served.",
    options_changed: "The request offered an option the table never learned.",
    option_removed:
      "The best answer over all options was removed by the request.",
    new_options_served:
      "Served by configuration despite a new option; not certified.",
    manual_threshold: "Served by a forced threshold; not certified.",
  };

  /**
   * The absolute URL of a route on this server, without credentials. Opened
   * as http://user:token@host/, the page's own URL holds the credentials,
   * relative URLs inherit them, and fetch() refuses any URL that holds
   * credentials; the origin never does, and the browser still sends the
   * login it used for the page.
   */
  function apiUrl(path) {
    return new URL(path, location.origin).href;
  }

  const state = {
    history: [], // {t, p50, p99, rate}
    stats: null,
    questionsKey: "",
    seenRecent: new Set(),
    firstRecent: true,
    timer: 0,
    inFlight: false,
    lastOk: 0,
  };

  // ---------- small DOM helpers ----------

  const $ = (id) => document.getElementById(id);

  /** Creates an element; children are nodes or strings (inserted as text). */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "style") el.setAttribute("style", v);
        else el.setAttribute(k, v === true ? "" : String(v));
      }
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function s(tag, attrs) {
    const el = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      el.setAttribute(k, String(v));
    }
    return el;
  }

  function setText(id, text) {
    const el = $(id);
    if (el.textContent !== text) el.textContent = text;
  }

  // ---------- formatting ----------

  const intFmt = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  const isNum = (x) => typeof x === "number" && Number.isFinite(x);

  const fmtInt = (n) => (isNum(n) ? intFmt.format(n) : "—");

  function fmtPct(x, digits = 1) {
    if (!isNum(x)) return "—";
    const p = x * 100;
    if (p > 0 && p < 0.1) return "<0.1%";
    if (p < 100 && p > 99.95) return ">99.9%";
    return `${p.toFixed(digits)}%`;
  }

  const SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹";

  /** A positive number that may be astronomically large: "3.58", "412", "1.3 × 10³⁵". */
  function fmtEvidence(x) {
    if (!isNum(x)) return x === Infinity ? "∞" : "—";
    if (x < 10) return x.toFixed(2);
    if (x < 1e5) return intFmt.format(x);
    const exp = Math.floor(Math.log10(x));
    const mant = x / 10 ** exp;
    const sup = String(exp).split("").map((d) => SUPERSCRIPT[Number(d)]).join(
      "",
    );
    return `${mant.toFixed(1)} × 10${sup}`;
  }

  /** A latency for an axis tick: as `fmtLatency`, without trailing zeros. */
  function fmtLatencyTick(us) {
    return fmtLatency(us).replace(/\.0+ /, " ").replace(/(\.\d*?)0+ /, "$1 ");
  }

  function fmtLatency(us) {
    if (!isNum(us)) return "—";
    if (us === 0) return "0";
    if (us < 10) return `${us.toFixed(1)} µs`;
    if (us < 1000) return `${Math.round(us)} µs`;
    if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
    return `${(us / 1e6).toFixed(2)} s`;
  }

  function fmtRate(r) {
    if (!isNum(r)) return "—";
    if (r === 0) return "0";
    if (r < 10) return r.toFixed(2);
    if (r < 100) return r.toFixed(1);
    return intFmt.format(r);
  }

  function fmtDuration(sec) {
    if (!isNum(sec)) return "—";
    if (sec < 1) return `${Math.round(sec * 1000)} ms`;
    if (sec < 60) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
    const m = Math.floor(sec / 60);
    if (m < 60) return `${m} min ${Math.floor(sec % 60)} s`;
    const hrs = Math.floor(m / 60);
    if (hrs < 48) return `${hrs} h ${m % 60} min`;
    return `${(sec / 86400).toFixed(1)} days`;
  }

  /** A duration in one short unit, for big figures: "81 s", "21.5 min", "3.2 h". */
  function fmtDurationShort(sec) {
    if (!isNum(sec)) return "—";
    if (sec === 0) return "0 s";
    if (sec < 1) return `${Math.round(sec * 1000)} ms`;
    if (sec < 100) return `${sec.toFixed(sec < 10 ? 1 : 0)} s`;
    if (sec < 6000) return `${(sec / 60).toFixed(1)} min`;
    if (sec < 172800) return `${(sec / 3600).toFixed(1)} h`;
    return `${(sec / 86400).toFixed(1)} days`;
  }

  function fmtMoney(x) {
    if (!isNum(x)) return "—";
    const digits = x !== 0 && Math.abs(x) < 1 ? 4 : 2;
    return new Intl.NumberFormat(undefined, {
      minimumFractionDigits: Math.min(2, digits),
      maximumFractionDigits: digits,
    }).format(x);
  }

  function fmtClock(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return "—";
    return d.toLocaleTimeString(undefined, {
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  }

  function fmtAgo(iso) {
    const t = new Date(iso).getTime();
    if (Number.isNaN(t)) return "";
    const sec = Math.max(0, (Date.now() - t) / 1000);
    if (sec < 5) return "just now";
    if (sec < 60) return `${Math.round(sec)} s ago`;
    return `${fmtDuration(sec).replace(/ \d+ s$/, "")} ago`;
  }

  function fmtAnswer(a) {
    if (a === true) return "yes";
    if (a === false) return "no";
    if (a === null || a === undefined || a === "") return "—";
    return String(a);
  }

  function fmtConfidence(c) {
    return isNum(c) ? fmtPct(c, 1) : "—";
  }

  function fmtRadius(r) {
    if (r === null) return "∞";
    return isNum(r) ? String(r) : "—";
  }

  function badge(certified) {
    return certified
      ? h("span", { class: "badge certified" }, "✓ certified")
      : h("span", { class: "badge deferred" }, "↪ to model");
  }

  // ---------- status line ----------

  function setStatus(kind, text) {
    const el = $("status");
    el.dataset.state = kind;
    setText("status-text", text);
  }

  // ---------- charts (inline SVG) ----------

  function niceStep(range, ticks) {
    const raw = range / Math.max(1, ticks);
    const mag = 10 ** Math.floor(Math.log10(raw));
    const norm = raw / mag;
    const step = norm <= 1
      ? 1
      : norm <= 2
      ? 2
      : norm <= 2.5
      ? 2.5
      : norm <= 5
      ? 5
      : 10;
    return step * mag;
  }

  function pathOf(points) {
    let d = "";
    let pen = false;
    for (const p of points) {
      if (p === null) {
        pen = false;
        continue;
      }
      d += `${pen ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}`;
      pen = true;
    }
    return d;
  }

  /**
   * Draws a time-series chart into `box`.
   * series: [{key, cls}] read from state.history samples.
   */
  function drawTimeChart(box, series, yFormat, emptyText, onHover, log) {
    const W = Math.max(200, box.clientWidth);
    const H = Math.max(100, box.clientHeight);
    const samples = state.history;
    const usable = samples.filter((p) => series.some((sr) => isNum(p[sr.key])));
    box.replaceChildren();
    if (usable.length < 2) {
      box.append(h("p", { class: "empty" }, emptyText));
      return;
    }
    const pad = { l: 56, r: 12, t: 10, b: 24 };
    const t0 = samples[0].t;
    const t1 = samples[samples.length - 1].t;
    const span = Math.max(1, t1 - t0);
    let yMax = 0;
    let yMin = Infinity;
    for (const p of samples) {
      for (const sr of series) {
        if (isNum(p[sr.key])) yMax = Math.max(yMax, p[sr.key]);
        if (isNum(p[sr.key]) && p[sr.key] > 0) yMin = Math.min(yMin, p[sr.key]);
      }
    }
    if (yMax <= 0) yMax = 1;
    const plotH = H - pad.t - pad.b;
    const x = (t) => pad.l + ((t - t0) / span) * (W - pad.l - pad.r);
    let y;
    const yTicks = [];
    if (log && isFinite(yMin)) {
      // Decades from the one below the smallest value to the one above the largest.
      const d0 = Math.floor(Math.log10(yMin));
      let d1 = Math.ceil(Math.log10(yMax));
      if (d1 <= d0) d1 = d0 + 1;
      y = (v) =>
        pad.t +
        (1 - (Math.log10(Math.max(v, 10 ** d0)) - d0) / (d1 - d0)) * plotH;
      const steps = d1 - d0 <= 2 ? [1, 2, 5] : [1];
      for (let d = d0; d <= d1; d++) {
        for (const m of steps) {
          if (m * 10 ** d <= 10 ** d1) yTicks.push(m * 10 ** d);
        }
      }
    } else {
      const step = niceStep(yMax, 4);
      yMax = Math.ceil(yMax / step) * step;
      y = (v) => pad.t + (1 - v / yMax) * plotH;
      for (let v = 0; v <= yMax + step / 2; v += step) yTicks.push(v);
    }

    const svg = s("svg", {
      viewBox: `0 0 ${W} ${H}`,
      width: W,
      height: H,
      role: "img",
    });
    const last = usable[usable.length - 1];
    svg.setAttribute(
      "aria-label",
      `${
        series.map((sr) => `${sr.label} ${yFormat(last[sr.key])}`).join(", ")
      } at the latest sample`,
    );
    const axis = s("g", { class: "axis" });
    for (const v of yTicks) {
      const yy = y(v);
      axis.append(
        s("line", {
          x1: pad.l,
          x2: W - pad.r,
          y1: yy,
          y2: yy,
          class: "grid-line",
        }),
      );
      const label = s("text", {
        x: pad.l - 8,
        y: yy + 4,
        "text-anchor": "end",
      });
      label.textContent = yFormat(v);
      axis.append(label);
    }
    const ticks = Math.min(4, Math.floor((W - pad.l - pad.r) / 90));
    for (let i = 0; i <= ticks; i++) {
      const t = t0 + (span * i) / ticks;
      const ago = Math.round((t1 - t) / 1000);
      const label = s("text", {
        x: x(t),
        y: H - 6,
        "text-anchor": i === 0 ? "start" : i === ticks ? "end" : "middle",
      });
      label.textContent = ago === 0
        ? "now"
        : ago < 120
        ? `−${ago} s`
        : `−${Math.round(ago / 60)} min`;
      axis.append(label);
    }
    svg.append(axis);

    for (const sr of series) {
      if (sr.area) {
        const pts = samples.map((
          p,
        ) => (isNum(p[sr.key]) ? [x(p.t), y(p[sr.key])] : null)).filter(
          Boolean,
        );
        if (pts.length > 1) {
          const d = `${pathOf(pts)}L${pts[pts.length - 1][0]},${y(0)}L${
            pts[0][0]
          },${y(0)}Z`;
          svg.append(s("path", { d, class: `area ${sr.cls}` }));
        }
      }
      const pts = samples.map((
        p,
      ) => (isNum(p[sr.key]) ? [x(p.t), y(p[sr.key])] : null));
      svg.append(s("path", { d: pathOf(pts), class: `series ${sr.cls}` }));
    }

    // Hover read-out: a cursor line and the values of the nearest sample.
    const cursor = s("line", {
      y1: pad.t,
      y2: H - pad.b,
      class: "grid-line",
      visibility: "hidden",
    });
    svg.append(cursor);
    svg.addEventListener("pointermove", (ev) => {
      const r = svg.getBoundingClientRect();
      const px = ((ev.clientX - r.left) / r.width) * W;
      const t = t0 + ((px - pad.l) / (W - pad.l - pad.r)) * span;
      let best = samples[0];
      for (const p of samples) {
        if (Math.abs(p.t - t) < Math.abs(best.t - t)) best = p;
      }
      cursor.setAttribute("x1", x(best.t));
      cursor.setAttribute("x2", x(best.t));
      cursor.setAttribute("visibility", "visible");
      if (onHover) onHover(best);
    });
    svg.addEventListener("pointerleave", () => {
      cursor.setAttribute("visibility", "hidden");
      if (onHover) onHover(null);
    });
    box.append(svg);
  }

  function drawSpark(svg, key) {
    const W = Math.max(100, svg.clientWidth || 160);
    const H = Math.max(20, svg.clientHeight || 34);
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.replaceChildren();
    const pts = state.history.filter((p) => isNum(p[key]));
    if (pts.length < 2) return;
    const t0 = pts[0].t;
    const span = Math.max(1, pts[pts.length - 1].t - t0);
    let max = 0;
    for (const p of pts) max = Math.max(max, p[key]);
    if (max <= 0) max = 1;
    const xy = pts.map((
      p,
    ) => [((p.t - t0) / span) * (W - 2) + 1, H - 2 - (p[key] / max) * (H - 4)]);
    const line = pathOf(xy);
    svg.append(
      s("path", {
        d: `${line}L${xy[xy.length - 1][0]},${H}L${xy[0][0]},${H}Z`,
        class: "area rate",
      }),
    );
    svg.append(s("path", { d: line, class: "series rate" }));
  }

  function drawCharts() {
    const st = state.stats;
    const noTraffic = !st || !st.latency_us || !st.latency_us.count;
    const showLegend = (p) => {
      const src = p || state.history[state.history.length - 1] || {};
      setText("lg-p50", fmtLatency(src.p50));
      setText("lg-p99", fmtLatency(src.p99));
    };
    drawTimeChart(
      $("latency-chart"),
      [
        { key: "p50", cls: "p50", label: "p50" },
        { key: "p99", cls: "p99", label: "p99" },
      ],
      fmtLatencyTick,
      noTraffic
        ? "No requests measured yet. The chart starts with the first decisions."
        : "Collecting samples; the chart draws from the second refresh on.",
      showLegend,
      true,
    );
    showLegend(null);
    drawSpark($("rate-spark"), "rate");
  }

  // ---------- sections ----------

  function renderHeader(st) {
    const qs = st.bundle && Array.isArray(st.bundle.questions)
      ? st.bundle.questions
      : [];
    const load = st.bundle && isNum(st.bundle.load_ms)
      ? ` · loaded in ${fmtLatency(st.bundle.load_ms * 1000)}`
      : "";
    setText(
      "bundle-path",
      `${st.bundle ? st.bundle.path : "?"} · ${qs.length} question${
        qs.length === 1 ? "" : "s"
      }${load}`,
    );
    setText(
      "footer-uptime",
      `Up ${fmtDuration(st.uptime_s)}, since ${
        new Date(st.started_at).toLocaleString()
      }.` +
        (st.keep_text
          ? " Recent texts are kept (--keep-text)."
          : " Raw texts are not kept."),
    );
  }

  function renderKpis(st) {
    const c = st.counts || {};
    const share = st.share_answered;
    setText("share", isNum(share) ? fmtPct(share) : "—");
    $("share-bar").style.width = isNum(share)
      ? `${(share * 100).toFixed(2)}%`
      : "0";
    setText(
      "share-sub",
      c.answers
        ? `${fmtInt(c.certified)} of ${fmtInt(c.answers)} answers certified; ${
          fmtInt(c.deferred)
        } went to the model`
        : "No answers yet: the share appears with the first decision.",
    );
    setText("answers-count", fmtInt(c.answers));
    setText(
      "answers-sub",
      `answers in ${fmtInt(c.requests)} request${
        c.requests === 1 ? "" : "s"
      } · ${fmtInt(c.errors)} error${c.errors === 1 ? "" : "s"} · ${
        fmtInt(c.playground)
      } playground`,
    );

    const rate = st.rate ? st.rate.requests_per_s : null;
    const rateEl = $("rate");
    rateEl.replaceChildren(fmtRate(rate), h("small", null, "req/s"));

    const lat = st.latency_us || {};
    setText("latency-p50", fmtLatency(lat.p50));
    setText(
      "latency-sub",
      lat.count
        ? `median · p90 ${fmtLatency(lat.p90)} · p99 ${
          fmtLatency(lat.p99)
        } · max ${fmtLatency(lat.max)}`
        : "no requests measured yet",
    );

    const sv = st.savings || {};
    const calls = `${fmtInt(sv.calls_saved)} model call${
      sv.calls_saved === 1 ? "" : "s"
    }`;
    const timeEl = $("time-saved");
    if (sv.llm_latency_ms === null || sv.llm_latency_ms === undefined) {
      timeEl.className = "big unset";
      timeEl.replaceChildren(
        "Start the server with ",
        h("code", null, "--llm-latency-ms"),
        " to see it.",
      );
      setText("time-sub", `${calls} saved so far.`);
    } else {
      timeEl.className = "big";
      timeEl.replaceChildren(fmtDurationShort(sv.time_saved_s ?? 0));
      setText(
        "time-sub",
        `${calls} of ${fmtInt(sv.llm_latency_ms)} ms avoided`,
      );
    }
    const moneyEl = $("money-saved");
    if (sv.cost_per_call === null || sv.cost_per_call === undefined) {
      moneyEl.className = "big unset";
      moneyEl.replaceChildren(
        "Start the server with ",
        h("code", null, "--cost-per-call"),
        " to see it.",
      );
      setText("money-sub", `${calls} saved so far.`);
    } else {
      moneyEl.className = "big";
      moneyEl.replaceChildren(fmtMoney(sv.money_saved ?? 0));
      setText(
        "money-sub",
        `${calls} at ${fmtMoney(sv.cost_per_call)} each, in your currency`,
      );
    }

    $("empty-banner").hidden = !!c.requests;
  }

  /** " · to model: low_confidence 20, drift 1", most frequent first; "" when none. */
  function flagsOf(flags) {
    const list = Object.entries(flags || {}).filter(([, n]) => n > 0);
    if (!list.length) return "";
    list.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return ` · to model: ${
      list.map(([f, n]) => `${f} ${fmtInt(n)}`).join(", ")
    }`;
  }

  function renderQuestions(st) {
    const qs = (st.bundle && st.bundle.questions) || [];
    const per = st.per_question || {};
    const list = h("ul", { class: "rows" });
    for (const q of qs) {
      const pq = per[q.name] ||
        { answers: 0, certified: 0, share_answered: null };
      const share = pq.share_answered;
      const kind = q.kind === "yes_no"
        ? "yes/no"
        : `choice of ${q.options.length}`;
      const calib = q.threshold === null || q.threshold === undefined
        ? "uncalibrated: never certified"
        : `threshold ${fmtPct(q.threshold)}${
          isNum(q.alpha) ? ` · α ${fmtPct(q.alpha, 1)}` : ""
        }`;
      list.append(
        h(
          "li",
          { "data-question": q.name },
          h(
            "div",
            { class: "row-head" },
            h(
              "span",
              { class: "name" },
              q.name,
              " ",
              h("span", { class: "muted small" }, kind),
            ),
            h("span", { class: "value" }, isNum(share) ? fmtPct(share) : "—"),
          ),
          h(
            "div",
            {
              class: "bar",
              role: "meter",
              "aria-label": `${q.name}: share certified`,
              "aria-valuemin": 0,
              "aria-valuemax": 100,
              "aria-valuenow": isNum(share) ? (share * 100).toFixed(1) : 0,
            },
            h("span", {
              style: `width:${isNum(share) ? (share * 100).toFixed(2) : 0}%`,
            }),
          ),
          h(
            "p",
            { class: "row-note" },
            pq.answers
              ? `${fmtInt(pq.certified)} of ${
                fmtInt(pq.answers)
              } certified · ${calib}${flagsOf(pq.flags)}`
              : `no answers yet · ${calib}`,
          ),
        ),
      );
    }
    $("questions").replaceChildren(
      qs.length
        ? list
        : h("p", { class: "empty" }, "The bundle lists no questions."),
    );
  }

  function renderReasons(st) {
    const reasons = Object.entries(st.deferral_reasons || {}).filter(([, n]) =>
      n > 0
    );
    reasons.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const total = reasons.reduce((a, [, n]) => a + n, 0);
    const box = $("reasons");
    if (!reasons.length) {
      box.replaceChildren(
        h(
          "p",
          { class: "empty" },
          st.counts && st.counts.answers
            ? "Every answer so far was certified: nothing went to the model."
            : "Nothing to explain yet: deferred answers and their reasons show here.",
        ),
      );
      return;
    }
    const list = h("ul", { class: "rows" });
    for (const [flag, n] of reasons) {
      list.append(
        h(
          "li",
          { "data-flag": flag },
          h(
            "div",
            { class: "row-head" },
            h("span", { class: "name flag" }, flag),
            h(
              "span",
              { class: "value" },
              `${fmtInt(n)} `,
              h("span", { class: "muted small" }, fmtPct(n / total, 0)),
            ),
          ),
          h(
            "div",
            { class: "bar deferral", "aria-hidden": "true" },
            h("span", { style: `width:${((n / total) * 100).toFixed(2)}%` }),
          ),
          h("p", { class: "row-note" }, FLAG_INFO[flag] || ""),
        ),
      );
    }
    box.replaceChildren(list);
  }

  function renderDrift(st) {
    const drift = Object.entries(st.drift || {});
    const box = $("drift");
    if (!drift.length) {
      box.replaceChildren(
        h("p", { class: "empty" }, "This bundle has no drift guard."),
      );
      return;
    }
    const list = h("ul", { class: "rows cols" });
    for (const [name, d] of drift) {
      const alarmed = d.status === "alarmed";
      const level = isNum(d.alarm_level) && d.alarm_level > 1
        ? d.alarm_level
        : 100;
      const ev = isNum(d.evidence) ? d.evidence : 0;
      // Evidence is a test martingale: plot it on a log scale from 1 to the alarm level.
      const frac = Math.min(
        1,
        Math.max(0, Math.log(Math.max(ev, 1)) / Math.log(level)),
      );
      const since = d.since
        ? ` since ${fmtClock(d.since)} (${fmtAgo(d.since)})`
        : "";
      const note = alarmed
        ? `Certification withheld${since}. Raised at request ${
          fmtInt(d.alarmed_at)
        }.`
        : `${fmtInt(d.observed)} requests watched${since}.`;
      list.append(
        h(
          "li",
          { "data-drift": name, "data-status": d.status },
          h(
            "div",
            { class: "row-head" },
            h("span", { class: "name" }, name),
            alarmed
              ? h("span", { class: "badge alarmed" }, "▲ alarmed")
              : h("span", { class: "badge quiet" }, "● quiet"),
          ),
          h(
            "div",
            {
              class: `bar evidence${alarmed ? " alarmed" : ""}`,
              role: "meter",
              "aria-label": `${name}: evidence of drift, ${
                fmtEvidence(ev)
              } of alarm level ${level}`,
              "aria-valuemin": 1,
              "aria-valuemax": level,
              "aria-valuenow": Math.min(level, Math.max(1, ev)).toFixed(2),
            },
            h("span", { style: `width:${(frac * 100).toFixed(2)}%` }),
          ),
          h(
            "p",
            { class: "row-note" },
            `Evidence ${fmtEvidence(ev)} of ${
              fmtInt(level)
            } to alarm · ${note} ${fmtInt(d.alarms)} alarm${
              d.alarms === 1 ? "" : "s"
            }, ${fmtInt(d.clears)} cleared.`,
          ),
        ),
      );
    }
    box.replaceChildren(list);
  }

  const LIVE_BADGES = {
    bundle: ["quiet", "● bundle's threshold"],
    live_lower: ["quiet", "▼ lowered by audits"],
    live_stricter: ["alarmed", "▲ raised by audits"],
    withdrawn: ["alarmed", "■ withdrawn"],
    uncalibrated: ["quiet", "○ uncalibrated"],
  };

  function renderLive(st) {
    const live = st.live;
    const box = $("live");
    if (!live) {
      box.replaceChildren(
        h("p", { class: "empty" }, "This server has no live certificate."),
      );
      return;
    }
    if (!live.enabled) {
      box.replaceChildren(
        h(
          "p",
          { class: "empty" },
          "Off: no certified answer is audited (serve --audit-rate 0).",
        ),
      );
      return;
    }
    const list = h("ul", { class: "rows cols" });
    for (const [name, q] of Object.entries(live.questions || {})) {
      const [kind, label] = LIVE_BADGES[q.reason] || ["quiet", q.reason];
      list.append(
        h(
          "li",
          { "data-live": name, "data-reason": q.reason },
          h(
            "div",
            { class: "row-head" },
            h("span", { class: "name" }, name),
            h("span", { class: `badge ${kind}` }, label),
          ),
          h("p", { class: "row-note" }, q.summary),
        ),
      );
    }
    box.replaceChildren(
      list,
      h(
        "p",
        { class: "muted small" },
        `Audits ${fmtPct(live.audit_rate)} of certified answers · ${
          fmtInt(live.pending_audits)
        } waiting for the model's answer (at most ${
          fmtInt(live.pending_capacity)
        }, for ${fmtDurationShort(live.audit_ttl_s)}) · ${
          fmtInt(live.audits_dropped)
        } dropped unanswered.`,
      ),
    );
  }

  function renderRecent(st) {
    const keep = !!st.keep_text;
    const rows = Array.isArray(st.recent) ? st.recent.slice() : [];
    rows.sort((a, b) => String(b.at).localeCompare(String(a.at)));
    const shown = rows.slice(0, RECENT_ROWS);
    const cols = [
      ["Time", ""],
      ["Route", ""],
      ["Question", ""],
      ["Answer", ""],
      ["Confidence", "num"],
      ["Verdict", ""],
      ["Flag", ""],
      ["Radius", "num"],
    ];
    if (keep) cols.push(["Text", ""]);
    const table = $("recent");
    const headKey = cols.map((c) => c[0]).join("|");
    if (table.dataset.head !== headKey) {
      table.tHead.replaceChildren(
        h(
          "tr",
          null,
          cols.map(([label, cls]) =>
            h("th", { scope: "col", class: cls || null }, label)
          ),
        ),
      );
      table.dataset.head = headKey;
    }
    const seen = new Set();
    const body = shown.map((r) => {
      const key = `${r.at}|${r.route}|${r.question}`;
      seen.add(key);
      const fresh = !state.firstRecent && !state.seenRecent.has(key);
      const cells = [
        h("td", { class: "c-time time", title: r.at }, fmtClock(r.at)),
        h("td", { class: "c-route mono small" }, r.route || ""),
        h("td", { class: "c-q" }, r.question || ""),
        h("td", { class: "c-ans" }, fmtAnswer(r.answer)),
        h("td", { class: "c-conf num" }, fmtConfidence(r.confidence)),
        h("td", { class: "c-verdict" }, badge(!!r.certified)),
        h("td", { class: "c-flag flag" }, r.flag || "—"),
        h("td", {
          class: "c-radius num",
          title: r.radius === null
            ? "no number of inserted words can flip it"
            : null,
        }, fmtRadius(r.radius)),
        // Shown instead of time, route, flag and radius on narrow screens.
        h(
          "td",
          { class: "c-meta", "aria-hidden": "true" },
          [
            fmtClock(r.at),
            r.route || "",
            r.flag || "",
            `radius ${fmtRadius(r.radius)}`,
          ].filter(Boolean).join(" · "),
        ),
      ];
      if (keep) {
        cells.push(
          h(
            "td",
            { class: "c-text text" },
            typeof r.text === "string" ? r.text : "",
          ),
        );
      }
      return h("tr", { class: fresh ? "fresh" : null }, cells);
    });
    table.tBodies[0].replaceChildren(...body);
    state.seenRecent = seen;
    state.firstRecent = false;
    $("recent-empty").hidden = shown.length > 0;
    table.hidden = shown.length === 0;
    setText(
      "recent-note",
      shown.length
        ? `Newest first; ${shown.length} shown.${
          keep
            ? ""
            : " Texts are not kept (start with --keep-text to see them)."
        } Radius: inserted words needed to flip the answer (∞: none can).`
        : "",
    );
    if (!shown.length) {
      setText(
        "recent-empty",
        "No decisions yet. Each answer the server gives appears here, newest first.",
      );
    }
  }

  function renderPlaygroundQuestions(st) {
    const qs = (st.bundle && st.bundle.questions) || [];
    const key = qs.map((q) => q.name).join("\u0000");
    if (key === state.questionsKey) return;
    state.questionsKey = key;
    const sel = $("pg-question");
    const prev = sel.value;
    sel.replaceChildren(
      ...qs.map((q) =>
        h(
          "option",
          { value: q.name },
          `${q.name} (${
            q.kind === "yes_no" ? "yes/no" : `${q.options.length} options`
          })`,
        )
      ),
    );
    if (qs.some((q) => q.name === prev)) sel.value = prev;
  }

  function render(st) {
    state.stats = st;
    renderHeader(st);
    renderKpis(st);
    renderQuestions(st);
    renderReasons(st);
    renderDrift(st);
    renderLive(st);
    renderRecent(st);
    renderPlaygroundQuestions(st);
    drawCharts();
  }

  // ---------- polling ----------

  function schedule(ms) {
    clearTimeout(state.timer);
    if (document.hidden) return;
    state.timer = setTimeout(poll, ms);
  }

  async function poll() {
    if (state.inFlight) return;
    state.inFlight = true;
    const ctl = new AbortController();
    const kill = setTimeout(() => ctl.abort(), 8000);
    let next = POLL_MS;
    try {
      const res = await fetch(apiUrl("/v1/stats"), {
        credentials: "same-origin",
        cache: "no-store",
        headers: { accept: "application/json" },
        signal: ctl.signal,
      });
      if (res.status === 401 || res.status === 403) {
        setStatus(
          "auth",
          "Sign-in needed: reload the page and enter the token as the password",
        );
        next = RETRY_MS * 2;
      } else if (!res.ok) {
        setStatus("error", `The server answered ${res.status}; retrying`);
        next = RETRY_MS;
      } else {
        const st = await res.json();
        // The chart follows the recent window; older servers only have the total.
        const lat = st.latency_us_recent || st.latency_us || {};
        state.history.push({
          t: Date.now(),
          p50: isNum(lat.p50) ? lat.p50 : null,
          p99: isNum(lat.p99) ? lat.p99 : null,
          rate: st.rate && isNum(st.rate.requests_per_s)
            ? st.rate.requests_per_s
            : null,
        });
        if (state.history.length > HISTORY) {
          state.history.splice(0, state.history.length - HISTORY);
        }
        render(st);
        state.lastOk = Date.now();
        setStatus("live", `Live · updated ${new Date().toLocaleTimeString()}`);
      }
    } catch (_err) {
      const when = state.lastOk
        ? ` (last update ${new Date(state.lastOk).toLocaleTimeString()})`
        : "";
      setStatus("error", `Cannot reach the server; retrying${when}`);
      next = RETRY_MS;
    } finally {
      clearTimeout(kill);
      state.inFlight = false;
      schedule(next);
    }
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) clearTimeout(state.timer);
    else poll();
  });

  // Redraw the charts when their boxes change size (window, layout, playground).
  let redraw = 0;
  const sized = new Map();
  const observer = new ResizeObserver((entries) => {
    let changed = false;
    for (const e of entries) {
      const key = `${Math.round(e.contentRect.width)}x${
        Math.round(e.contentRect.height)
      }`;
      if (sized.get(e.target) !== key) changed = true;
      sized.set(e.target, key);
    }
    if (!changed || !state.stats) return;
    cancelAnimationFrame(redraw);
    redraw = requestAnimationFrame(drawCharts);
  });
  observer.observe($("latency-chart"));
  observer.observe($("rate-spark"));

  // ---------- playground ----------

  function renderPlayground(r) {
    // A yes/no answer is a boolean; its options come as "true" and "false".
    const yesNo = typeof r.answer === "boolean";
    const optionLabel = (o) =>
      yesNo && (o === "true" || o === "false")
        ? fmtAnswer(o === "true")
        : fmtAnswer(o);
    const threshold = isNum(r.threshold) ? r.threshold : null;
    const conf = isNum(r.confidence) ? r.confidence : 0;
    const top = Array.isArray(r.top) ? r.top.slice(0, 3) : [];
    const facts = h(
      "dl",
      { class: "pg-facts" },
      h("dt", null, "Confidence"),
      h("dd", { id: "pg-confidence" }, fmtConfidence(r.confidence)),
      h("dt", null, "Threshold"),
      h(
        "dd",
        null,
        threshold === null
          ? "none: the question is not calibrated"
          : fmtPct(threshold),
      ),
      h("dt", null, "Alpha"),
      h(
        "dd",
        null,
        isNum(r.alpha)
          ? `${
            fmtPct(r.alpha)
          }: certified answers disagree with the model at most this often`
          : "—",
      ),
      h("dt", null, "Flag"),
      h("dd", { class: "flag" }, r.flag || "none"),
      h("dt", null, "Radius"),
      h(
        "dd",
        null,
        r.radius === null
          ? "no number of inserted words can flip it"
          : isNum(r.radius)
          ? `${r.radius} inserted word${
            r.radius === 1 ? "" : "s"
          } could flip it`
          : "—",
      ),
    );
    const meter = h(
      "div",
      {
        class: `bar${r.certified ? "" : " deferral"}${
          threshold === null ? "" : " with-tick"
        }`,
        role: "meter",
        "aria-label": "Confidence against the threshold",
        "aria-valuemin": 0,
        "aria-valuemax": 100,
        "aria-valuenow": (conf * 100).toFixed(1),
      },
      h("span", { style: `width:${(conf * 100).toFixed(2)}%` }),
      threshold === null ? null : h("i", {
        class: "tick",
        style: `left:calc(${(threshold * 100).toFixed(2)}% - 1px)`,
      }),
    );
    const topList = h("ul", { class: "rows" });
    for (const t of top) {
      const p = isNum(t.probability) ? t.probability : 0;
      topList.append(
        h(
          "li",
          null,
          h(
            "div",
            { class: "row-head" },
            h("span", { class: "name" }, optionLabel(t.option)),
            h("span", { class: "value" }, fmtPct(p)),
          ),
          h(
            "div",
            { class: "bar", "aria-hidden": "true" },
            h("span", { style: `width:${(p * 100).toFixed(2)}%` }),
          ),
        ),
      );
    }
    $("pg-result").replaceChildren(
      h(
        "div",
        { class: "pg-answer" },
        h("p", { class: "big", id: "pg-answer" }, fmtAnswer(r.answer)),
        badge(!!r.certified),
      ),
      meter,
      h("p", { class: "pg-reason", id: "pg-reason" }, r.reason || ""),
      facts,
      top.length
        ? h("div", { class: "pg-top" }, h("h3", null, "Top options"), topList)
        : null,
    );
  }

  $("pg-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const btn = $("pg-submit");
    const body = { text: $("pg-text").value };
    if ($("pg-question").value) body.question = $("pg-question").value;
    btn.disabled = true;
    btn.textContent = "Asking…";
    try {
      const res = await fetch(apiUrl("/v1/playground"), {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(body),
      });
      let data = null;
      try {
        data = await res.json();
      } catch (_err) {
        data = null;
      }
      if (!res.ok || !data || data.error) {
        const msg = data && data.error
          ? data.error
          : `The server answered ${res.status}.`;
        $("pg-result").replaceChildren(
          h("p", { class: "pg-error", role: "alert" }, msg),
        );
      } else {
        renderPlayground(data);
      }
    } catch (_err) {
      $("pg-result").replaceChildren(
        h(
          "p",
          { class: "pg-error", role: "alert" },
          "Cannot reach the server. Try again in a moment.",
        ),
      );
    } finally {
      btn.disabled = false;
      btn.textContent = "Ask the table";
    }
  });

  $("pg-text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      $("pg-form").requestSubmit();
    }
  });

  // ---------- start ----------

  $("empty-example").textContent = `curl -s ${location.origin}/v1/decide \\\n` +
    `  -H 'content-type: application/json' \\\n` +
    `  -d '{"state": "I lost my card, what now?"}'`;
  poll();
})();
