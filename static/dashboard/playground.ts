/**
 * The playground card: pick a question, type a text, press Enter, and see
 * the table's answer, its confidence against the threshold and the verdict
 * in words. Playground calls never count as decisions.
 *
 * @module
 */

import { requestJson } from "./api.ts";
import { verdictBadge } from "./cards/badge.ts";
import { byId, h, widthOf } from "./dom.ts";
import { fmtAnswer, fmtConfidence, fmtPct, isNum } from "./format.ts";
import type { PlaygroundReply, Stats } from "./stats.ts";

/** "no number of inserted words can flip it", "2 inserted words could flip it". */
function radiusInWords(radius: number | null): string {
  if (radius === null) return "no number of inserted words can flip it";
  if (!isNum(radius)) return "—";
  return `${radius} inserted word${radius === 1 ? "" : "s"} could flip it`;
}

/** The confidence as a bar, with the threshold marked on it. */
function confidenceMeter(r: PlaygroundReply): HTMLDivElement {
  const threshold = isNum(r.threshold) ? r.threshold : null;
  const confidence = isNum(r.confidence) ? r.confidence : 0;
  return h(
    "div",
    {
      class: `bar${r.certified ? "" : " deferral"}${
        threshold === null ? "" : " with-tick"
      }`,
      role: "meter",
      "aria-label": "Confidence against the threshold",
      "aria-valuemin": 0,
      "aria-valuemax": 100,
      "aria-valuenow": (confidence * 100).toFixed(1),
    },
    h("span", { style: widthOf(confidence) }),
    threshold === null ? null : h("i", {
      class: "tick",
      style: `left:calc(${(threshold * 100).toFixed(2)}% - 1px)`,
    }),
  );
}

function facts(r: PlaygroundReply): HTMLDListElement {
  return h(
    "dl",
    { class: "pg-facts" },
    h("dt", null, "Confidence"),
    h("dd", { id: "pg-confidence" }, fmtConfidence(r.confidence)),
    h("dt", null, "Threshold"),
    h(
      "dd",
      null,
      isNum(r.threshold)
        ? fmtPct(r.threshold)
        : "none: the question is not calibrated",
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
    h("dd", null, radiusInWords(r.radius)),
  );
}

function topOptions(r: PlaygroundReply): HTMLDivElement | null {
  const top = Array.isArray(r.top) ? r.top.slice(0, 3) : [];
  if (!top.length) return null;
  // A yes/no answer is a boolean; its options come as "true" and "false".
  const yesNo = typeof r.answer === "boolean";
  const label = (o: string) =>
    yesNo && (o === "true" || o === "false")
      ? fmtAnswer(o === "true")
      : fmtAnswer(o);
  const list = h("ul", { class: "rows" });
  for (const t of top) {
    const p = isNum(t.probability) ? t.probability : 0;
    list.append(
      h(
        "li",
        null,
        h(
          "div",
          { class: "row-head" },
          h("span", { class: "name" }, label(t.option)),
          h("span", { class: "value" }, fmtPct(p)),
        ),
        h(
          "div",
          { class: "bar", "aria-hidden": "true" },
          h("span", { style: widthOf(p) }),
        ),
      ),
    );
  }
  return h("div", { class: "pg-top" }, h("h3", null, "Top options"), list);
}

function showReply(r: PlaygroundReply): void {
  const top = topOptions(r);
  byId("pg-result").replaceChildren(
    h(
      "div",
      { class: "pg-answer" },
      h("p", { class: "big", id: "pg-answer" }, fmtAnswer(r.answer)),
      verdictBadge(!!r.certified),
    ),
    confidenceMeter(r),
    h("p", { class: "pg-reason", id: "pg-reason" }, r.reason || ""),
    facts(r),
    ...(top ? [top] : []),
  );
}

function showError(message: string): void {
  byId("pg-result").replaceChildren(
    h("p", { class: "pg-error", role: "alert" }, message),
  );
}

/** The error message of a JSON error body, if it has one. */
function errorOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null || !("error" in body)) {
    return null;
  }
  return typeof body.error === "string" && body.error ? body.error : null;
}

async function ask(): Promise<void> {
  const button = byId("pg-submit", HTMLButtonElement);
  const question = byId("pg-question", HTMLSelectElement).value;
  const body: { text: string; question?: string } = {
    text: byId("pg-text", HTMLTextAreaElement).value,
  };
  if (question) body.question = question;
  button.disabled = true;
  button.textContent = "Asking…";
  try {
    const reply = await requestJson("/v1/playground", { body });
    const error = errorOf(reply.body);
    if (!reply.ok || reply.body === null || error !== null) {
      showError(error ?? `The server answered ${reply.status}.`);
    } else {
      showReply(reply.body as PlaygroundReply);
    }
  } catch {
    showError("Cannot reach the server. Try again in a moment.");
  } finally {
    button.disabled = false;
    button.textContent = "Ask the table";
  }
}

/** Wires the form: submit asks the table; Enter submits, Shift+Enter starts a new line. */
export function startPlayground(): void {
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

/** The questions to pick from, kept in step with the bundle; the choice survives a refresh. */
export class QuestionPicker {
  #key = "";

  /** Lists the questions of `st`'s bundle, when they changed. */
  render(st: Stats): void {
    const questions = st.bundle?.questions ?? [];
    const key = questions.map((q) => q.name).join("\u0000");
    if (key === this.#key) return;
    this.#key = key;
    const select = byId("pg-question", HTMLSelectElement);
    const previous = select.value;
    select.replaceChildren(
      ...questions.map((q) =>
        h(
          "option",
          { value: q.name },
          `${q.name} (${
            q.kind === "yes_no" ? "yes/no" : `${q.options.length} options`
          })`,
        )
      ),
    );
    if (questions.some((q) => q.name === previous)) select.value = previous;
  }
}
