/**
 * The header (bundle, connection state) and the footer (uptime).
 *
 * @module
 */

import { byId, setText } from "../dom.ts";
import { fmtDuration, fmtLatency, isNum, plural } from "../format.ts";
import type { ConnectionState } from "../poll.ts";
import type { Stats } from "../stats.ts";

/** Shows the connection's state: a coloured dot (by `data-state`) and a sentence. */
export function showStatus(state: ConnectionState, text: string): void {
  byId("status").dataset.state = state;
  setText("status-text", text);
}

/** The bundle's path, its questions and load time; the server's uptime. */
export function renderHeader(st: Stats): void {
  const questions = st.bundle?.questions ?? [];
  const load = isNum(st.bundle?.load_ms)
    ? ` · loaded in ${fmtLatency(st.bundle.load_ms * 1000)}`
    : "";
  setText(
    "bundle-path",
    `${st.bundle?.path ?? "?"} · ${
      plural(questions.length, "question")
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
