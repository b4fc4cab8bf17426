/**
 * The header (bundle, connection state) and the footer (uptime).
 *
 * @module
 */

import { byId, setText } from "../dom.ts";
import {
  fmtClock,
  fmtDuration,
  fmtLatency,
  isNum,
  plural,
  reloadInWords,
} from "../format.ts";
import type { ConnectionState } from "../poll.ts";
import type { Stats } from "../stats.ts";

/** Shows the connection's state: a coloured dot (by `data-state`) and a sentence. */
export function showStatus(state: ConnectionState, text: string): void {
  byId("status").dataset.state = state;
  setText("status-text", text);
}

/** The bundle's path, id, questions, load time and last reload; the server's uptime. */
export function renderHeader(st: Stats): void {
  const questions = st.bundle?.questions ?? [];
  const load = isNum(st.bundle?.load_ms)
    ? ` · loaded in ${fmtLatency(st.bundle.load_ms * 1000)}`
    : "";
  const served = `${st.bundle?.path ?? "?"} · ${
    plural(questions.length, "question")
  }${load}${reloadInWords(st.bundle, st.reloads?.count ?? 0)}`;
  // A learning service says so first, and what it serves so far.
  setText(
    "bundle-path",
    st.learn === undefined
      ? served
      : questions.length === 0
      ? `Learning in ${st.learn.dir} · no bundle yet: every answer goes to your model until a retrain calibrates one`
      : `Learning in ${st.learn.dir} · serving ${served}`,
  );
  const since = st.bundle?.loaded_at;
  setText(
    "questions-since",
    (st.reloads?.count ?? 0) > 0 && since
      ? `Since the bundle was reloaded at ${fmtClock(since)}.`
      : "",
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
