/**
 * The key figures along the top: share answered, decisions, request rate,
 * server latency, time and money saved, and the first-run banner.
 *
 * @module
 */

import { byId, h, setText } from "../dom.ts";
import {
  fmtDurationShort,
  fmtInt,
  fmtLatency,
  fmtMoney,
  fmtPct,
  fmtRate,
  isNum,
  plural,
} from "../format.ts";
import type { Stats } from "../stats.ts";

/** Fills the key figures from `st`. */
export function renderKpis(st: Stats): void {
  const c = st.counts;
  const share = st.share_answered;
  setText("share", fmtPct(share));
  byId("share-bar").style.width = isNum(share)
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
    `answers in ${plural(c.requests, "request")} · ${
      plural(c.errors, "error")
    } · ${fmtInt(c.playground)} playground`,
  );

  byId("rate").replaceChildren(
    fmtRate(st.rate?.requests_per_s),
    h("small", null, "req/s"),
  );

  const lat = st.latency_us;
  setText("latency-p50", fmtLatency(lat?.p50));
  setText(
    "latency-sub",
    lat?.count
      ? `median · p90 ${fmtLatency(lat.p90)} · p99 ${
        fmtLatency(lat.p99)
      } · max ${fmtLatency(lat.max)}`
      : "no requests measured yet",
  );

  renderSavings(st);
  byId("empty-banner").hidden = c.requests > 0;
}

/** A big figure, or, when its flag was not given, the flag to set. */
function savingsFigure(
  id: string,
  figure: string | null,
  flag: string,
): void {
  const el = byId(id);
  if (figure === null) {
    el.className = "big unset";
    el.replaceChildren(
      "Start the server with ",
      h("code", null, flag),
      " to see it.",
    );
  } else {
    el.className = "big";
    el.replaceChildren(figure);
  }
}

function renderSavings(st: Stats): void {
  const sv = st.savings;
  const calls = plural(sv.calls_saved, "model call");
  const latencyKnown = isNum(sv.llm_latency_ms);
  savingsFigure(
    "time-saved",
    latencyKnown ? fmtDurationShort(sv.time_saved_s ?? 0) : null,
    "--llm-latency-ms",
  );
  setText(
    "time-sub",
    latencyKnown
      ? `${calls} of ${fmtInt(sv.llm_latency_ms)} ms avoided`
      : `${calls} saved so far.`,
  );
  const costKnown = isNum(sv.cost_per_call);
  savingsFigure(
    "money-saved",
    costKnown ? fmtMoney(sv.money_saved ?? 0) : null,
    "--cost-per-call",
  );
  setText(
    "money-sub",
    costKnown
      ? `${calls} at ${fmtMoney(sv.cost_per_call)} each, in your currency`
      : `${calls} saved so far.`,
  );
}
