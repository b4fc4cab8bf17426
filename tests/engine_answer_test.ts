import assert from "node:assert/strict";
import {
  type AskOptions,
  assess,
  probabilitiesOf,
} from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { type DriftGuard, QUIET_GUARD } from "../src/engine/drift.ts";
import type {
  QuestionTable,
  Table,
  TableSettings,
} from "../src/engine/table.ts";
import { TableState } from "../src/engine/state.ts";
import { reasonInWords } from "../src/engine/reason.ts";
import {
  smallTable,
  stateOf,
  syntheticTraces,
  yesNoAnswer,
} from "./_fixtures.ts";
import { scoreEntries, scoreText } from "../src/engine/score.ts";

// The single-text drift rule is switched off here so that each test checks
// the rule it names; its own test below switches it back on.
const trained = smallTable().table;
const table = withSettings(trained, {
  drift: { ...trained.settings.drift, single_p: 0, max_novelty: 1 },
});
const LOUD_GUARD: DriftGuard = { observe: () => false };

function ask(
  t: Table,
  text: string,
  question: string,
  options: AskOptions = {},
  guard: DriftGuard = QUIET_GUARD,
  state: TableState = stateOf(t),
) {
  return assess(
    t,
    state,
    prepareText(t, state, text),
    question,
    options,
    guard,
  );
}

function withSettings(t: Table, patch: Partial<TableSettings>): Table {
  return { ...t, settings: { ...t.settings, ...patch } };
}

function withQuestion(
  t: Table,
  name: string,
  patch: Partial<QuestionTable>,
): Table {
  const q = { ...t.byName.get(name)!, ...patch };
  const questions = t.questions.map((x) => (x.name === name ? q : x));
  return {
    ...t,
    // A new table, so a new state: the patch may change what a word adds.
    questions,
    byName: new Map(questions.map((x) => [x.name, x])),
  };
}

function uncalibrated(t: Table, name: string): Table {
  const c = t.byName.get(name)!.calibration;
  return withQuestion(t, name, {
    calibration: {
      ...c,
      status: "uncalibrated",
      threshold: null,
      reason: "test",
    },
  });
}

const topic = table.byName.get("topic")!;
const threshold = topic.calibration.threshold!;
/** A clear text, certified as is. */
const CLEAR = "i need my parcel";
/** A text that mixes topics, below the threshold. */
const MIXED = "invoice parcel refund password";

Deno.test("the small table is calibrated for topic and urgent, not for the random coin", () => {
  assert.equal(topic.calibration.status, "calibrated");
  assert.ok(threshold > 0.3 && threshold < 1, `threshold ${threshold}`);
  assert.equal(table.byName.get("urgent")!.calibration.status, "calibrated");
  assert.equal(table.byName.get("coin")!.calibration.status, "uncalibrated");
  assert.match(
    table.byName.get("coin")!.calibration.reason!,
    /no candidate threshold passed/,
  );
});

Deno.test("assess() certifies a clear answer at or above the threshold", () => {
  const a = ask(table, CLEAR, "topic");
  assert.equal(a.answer.choice, "shipping");
  assert.equal(a.answer.certified, true);
  assert.equal(a.answer.flag, null);
  assert.ok(a.answer.confidence >= threshold);
  assert.equal(a.threshold, threshold);
});

Deno.test("assess() certifies an answer only when its confidence reaches the threshold", () => {
  let certified = 0;
  let lowConfidence = 0;
  let drift = 0;
  for (const { text } of syntheticTraces({ count: 300, seed: 77 })) {
    const a = ask(table, text, "topic");
    const reaches = a.fullConfidence >= threshold;
    if (a.answer.certified) {
      certified++;
      assert.ok(reaches, text);
      assert.equal(a.answer.flag, null);
    } else if (a.answer.flag === "drift") {
      // The single-text drift rule may withhold a rare in-distribution text, whatever its confidence.
      drift++;
    } else {
      lowConfidence++;
      assert.equal(a.answer.flag, "low_confidence", text);
      assert.ok(!reaches, text);
    }
  }
  assert.ok(certified > 250, `${certified} certified`);
  assert.ok(drift <= 15, `${drift} fresh in-distribution texts flagged drift`);
  console.log(
    `topic on 300 fresh texts: ${certified} certified, ${lowConfidence} low_confidence, ${drift} drift`,
  );
});

Deno.test("assess() withholds an answer below the threshold with low_confidence", () => {
  const a = ask(table, MIXED, "topic");
  assert.ok(a.answer.confidence < threshold);
  assert.equal(a.answer.certified, false);
  assert.equal(a.answer.flag, "low_confidence");
});

Deno.test("assess() flags an empty text empty_input, even white space or punctuation only", () => {
  for (const text of ["", "   ", "\n\t", "?!.,;", " ... --- "]) {
    for (const q of ["topic", "urgent"]) {
      const a = ask(table, text, q);
      assert.equal(a.answer.flag, "empty_input", JSON.stringify(text));
      assert.equal(a.answer.certified, false);
    }
    // Also when the table would otherwise certify everything.
    const lenient = withQuestion(table, "topic", {
      calibration: { ...topic.calibration, threshold: 0 },
    });
    assert.equal(ask(lenient, text, "topic").answer.flag, "empty_input");
  }
});

Deno.test("assess() flags an unknown question unsupported", () => {
  const a = ask(table, CLEAR, "no_such_question");
  assert.equal(a.answer.flag, "unsupported");
  assert.equal(a.answer.certified, false);
  assert.equal(a.answer.radius, null);
  assert.equal(a.threshold, null);
});

Deno.test("assess() flags an offered option the table never learned options_changed", () => {
  for (
    const options of [["shipping", "teleport"], ["teleport"], [
      "billing",
      "shipping",
      "refund",
      "account",
      "x",
    ]]
  ) {
    const a = ask(table, CLEAR, "topic", { options });
    assert.equal(a.answer.flag, "options_changed", options.join());
    assert.equal(a.answer.certified, false);
  }
});

Deno.test("assess() flags new options new_options_served when the bundle serves them, never certified", () => {
  const serving = withSettings(table, { serve_new_options: true });
  for (const options of [["shipping", "teleport"], ["teleport", "warp"]]) {
    const a = ask(serving, CLEAR, "topic", { options });
    assert.equal(a.answer.flag, "new_options_served");
    assert.equal(a.answer.certified, false);
    assert.ok(
      a.answer.choice !== undefined && options.includes(a.answer.choice),
    );
    const sum = Object.values(probabilitiesOf(a.answer)).reduce(
      (s, p) => s + p,
      0,
    );
    assert.ok(Math.abs(sum - 1) < 1e-9);
  }
});

Deno.test("assess() flags a narrowed subset that removes the full answer option_removed", () => {
  const full = ask(table, CLEAR, "topic");
  assert.equal(full.answer.choice, "shipping");
  const a = ask(table, CLEAR, "topic", { options: ["billing", "refund"] });
  assert.equal(a.answer.flag, "option_removed");
  assert.equal(a.answer.certified, false);
  assert.ok(a.answer.choice === "billing" || a.answer.choice === "refund");
  assert.deepEqual(Object.keys(probabilitiesOf(a.answer)).sort(), [
    "billing",
    "refund",
  ]);
});

Deno.test("assess() narrowing never raises certification and renormalises the subset", () => {
  const subsets = [["billing", "shipping"], ["refund", "account", "shipping"], [
    "account",
    "billing",
  ], ["refund"]];
  let narrowedCertified = 0;
  for (const { text } of syntheticTraces({ count: 150, seed: 78 })) {
    const full = ask(table, text, "topic");
    for (const options of subsets) {
      const n = ask(table, text, "topic", { options });
      if (n.answer.certified) {
        narrowedCertified++;
        assert.ok(
          full.answer.certified,
          `${text} / ${options}: narrowed certified, full not`,
        );
        assert.equal(n.answer.choice, full.answer.choice);
        assert.equal(n.fullConfidence, full.fullConfidence);
      }
      const p = probabilitiesOf(n.answer);
      assert.deepEqual(Object.keys(p).sort(), [...options].sort());
      const sum = Object.values(p).reduce((s, x) => s + x, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum}`);
      // Ratios within the subset are those of the full answer.
      const [x, y] = options;
      if (y !== undefined && probabilitiesOf(full.answer)[y]! > 1e-200) {
        const want = probabilitiesOf(full.answer)[x!]! /
          probabilitiesOf(full.answer)[y]!;
        assert.ok(Math.abs(p[x!]! / p[y]! - want) <= 1e-6 * want, `${x}/${y}`);
      }
    }
  }
  assert.ok(narrowedCertified > 0, "some narrowed answers are certified");
});

Deno.test("assess() renormalises a subset holding almost no probability mass without NaN", () => {
  // A tiny temperature drives the losers' full probabilities to exactly 0.
  const sharp = withQuestion(table, "topic", { temperature: 1e-4 });
  const full = ask(sharp, CLEAR, "topic");
  assert.equal(probabilitiesOf(full.answer).billing, 0);
  assert.equal(probabilitiesOf(full.answer).account, 0);
  const a = ask(sharp, CLEAR, "topic", { options: ["billing", "account"] });
  const p = Object.values(probabilitiesOf(a.answer));
  assert.ok(
    p.every(Number.isFinite),
    JSON.stringify(probabilitiesOf(a.answer)),
  );
  assert.ok(Math.abs(p.reduce((s, x) => s + x, 0) - 1) < 1e-12);
  assert.ok(Number.isFinite(a.answer.confidence) && a.answer.confidence >= 0.5);
  assert.equal(a.answer.flag, "option_removed");
});

Deno.test("assess() flags a question without calibration uncalibrated", () => {
  const a = ask(table, CLEAR, "coin");
  assert.equal(a.answer.flag, "uncalibrated");
  assert.equal(a.answer.certified, false);
  const b = ask(uncalibrated(table, "topic"), CLEAR, "topic");
  assert.equal(b.answer.flag, "uncalibrated");
});

Deno.test("assess() serves a forced threshold as manual_threshold, never certified", () => {
  const forced = withSettings(table, {
    force_thresholds: { coin: 0, topic: 0.1 },
  });
  const a = ask(forced, CLEAR, "coin");
  assert.equal(a.answer.flag, "manual_threshold");
  assert.equal(a.answer.certified, false);
  // Below the calibrated threshold but above the forced one.
  const b = ask(forced, MIXED, "topic");
  assert.ok(b.fullConfidence >= 0.1 && b.fullConfidence < threshold);
  assert.equal(b.answer.flag, "manual_threshold");
  assert.equal(b.answer.certified, false);
  // A certified answer stays certified; a forced threshold above the confidence changes nothing.
  assert.equal(ask(forced, CLEAR, "topic").answer.certified, true);
  const high = withSettings(table, { force_thresholds: { topic: 0.99 } });
  assert.equal(ask(high, MIXED, "topic").answer.flag, "low_confidence");
});

Deno.test("assess() flags an exposed answer with a radius below the minimum low_radius", () => {
  const strict = withSettings(table, { min_radius: 1000 });
  const a = ask(strict, CLEAR, "topic", { exposed: true });
  assert.ok(a.answer.radius !== null && a.answer.radius < 1000);
  assert.equal(a.answer.flag, "low_radius");
  assert.equal(a.answer.certified, false);
  // Not exposed: the radius does not matter.
  assert.equal(ask(strict, CLEAR, "topic").answer.certified, true);
  // Exposed with a radius at the minimum: certified.
  const r = ask(table, CLEAR, "topic").answer.radius!;
  assert.equal(
    ask(withSettings(table, { min_radius: r }), CLEAR, "topic", {
      exposed: true,
    }).answer.certified,
    true,
  );
});

Deno.test("assess() withholds certification with drift when the guard is not quiet", () => {
  const seen: number[] = [];
  const guard: DriftGuard = {
    observe: (_q, score) => {
      seen.push(score);
      return false;
    },
  };
  const a = ask(table, CLEAR, "topic", {}, guard);
  assert.equal(a.answer.flag, "drift");
  assert.equal(a.answer.certified, false);
  assert.equal(seen.length, 1, "the guard sees the text's score");
  assert.equal(seen[0], a.driftScore);
});

Deno.test("assess() reports the first failing rule in the documented order", async (t) => {
  const loud = LOUD_GUARD;
  const cases: {
    name: string;
    table: Table;
    text: string;
    q: string;
    ask?: AskOptions;
    guard?: DriftGuard;
    flag: string;
  }[] = [
    {
      name: "empty beats options_changed",
      table,
      text: " ",
      q: "topic",
      ask: { options: ["x"] },
      flag: "empty_input",
    },
    {
      name: "empty beats drift and low_radius",
      table: withSettings(table, { min_radius: 99 }),
      text: "?",
      q: "topic",
      ask: { exposed: true },
      guard: loud,
      flag: "empty_input",
    },
    {
      name: "options_changed beats option_removed",
      table,
      text: CLEAR,
      q: "topic",
      ask: { options: ["billing", "x"] },
      flag: "options_changed",
    },
    {
      name: "option_removed beats uncalibrated",
      table: uncalibrated(table, "topic"),
      text: CLEAR,
      q: "topic",
      ask: { options: ["billing"] },
      flag: "option_removed",
    },
    {
      name: "uncalibrated beats drift",
      table,
      text: CLEAR,
      q: "coin",
      guard: loud,
      flag: "uncalibrated",
    },
    {
      name: "drift beats low_confidence",
      table,
      text: MIXED,
      q: "topic",
      guard: loud,
      flag: "drift",
    },
    {
      name: "drift beats manual_threshold",
      table: withSettings(table, { force_thresholds: { topic: 0 } }),
      text: MIXED,
      q: "topic",
      guard: loud,
      flag: "drift",
    },
    {
      name: "low_confidence beats low_radius",
      table: withSettings(table, { min_radius: 99 }),
      text: MIXED,
      q: "topic",
      ask: { exposed: true },
      flag: "low_confidence",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assert.equal(
        ask(c.table, c.text, c.q, c.ask, c.guard).answer.flag,
        c.flag,
      );
    });
  }
});

Deno.test({
  name: "assess() flags an empty text empty_input even for an unknown question",
  fn() {
    assert.equal(ask(table, "", "no_such_question").answer.flag, "empty_input");
  },
});

Deno.test("assess() returns a typed answer: a choice, a yes/no, or none for a question it cannot answer", () => {
  const cases: [ReturnType<typeof ask>, "choice" | "yes_no" | "none"][] = [
    [ask(table, CLEAR, "topic"), "choice"],
    [ask(table, MIXED, "topic", { options: ["billing", "refund"] }), "choice"],
    [ask(table, CLEAR, "topic", { options: ["teleport"] }), "choice"],
    [ask(table, "", "topic"), "choice"],
    [ask(table, "urgent help", "urgent"), "yes_no"],
    [ask(table, "", "urgent"), "yes_no"],
    [ask(table, CLEAR, "coin"), "yes_no"],
    [ask(table, CLEAR, "nope"), "none"],
  ];
  for (const [{ answer: a }, kind] of cases) {
    assert.equal(a.kind, kind, JSON.stringify(a));
    assert.equal(typeof a.confidence, "number");
    assert.ok(a.confidence >= 0 && a.confidence <= 1);
    assert.equal(typeof a.certified, "boolean");
    assert.ok(
      a.radius === null || (Number.isInteger(a.radius) && a.radius >= 1),
    );
    assert.equal(a.driftRule, a.flag === "drift" ? a.driftRule : null);
    if (a.kind === "choice") {
      assert.equal(typeof a.choice, "string");
      assert.equal(a.options.length, a.probabilities.length);
      assert.equal(a.options[a.chosen], a.choice);
      assert.equal(a.answer, undefined);
    } else if (a.kind === "yes_no") {
      assert.equal(typeof a.answer, "boolean");
      assert.equal(typeof a.probability, "number");
      assert.equal(a.choice, undefined);
    } else {
      assert.equal(a.flag, "unsupported");
      assert.equal(a.choice, undefined);
      assert.equal(a.answer, undefined);
    }
  }
});

Deno.test("assess() answers yes/no with the probability of yes", () => {
  for (
    const text of ["urgent help", "i need my parcel", "asap refund", "hello"]
  ) {
    const a = yesNoAnswer(ask(table, text, "urgent").answer);
    assert.equal(typeof a.answer, "boolean");
    assert.equal(a.answer, a.probability >= 0.5);
    assert.ok(
      Math.abs(a.confidence - Math.max(a.probability, 1 - a.probability)) <
        1e-12,
    );
  }
  assert.equal(ask(table, "this is urgent asap", "urgent").answer.answer, true);
  assert.equal(ask(table, "i need my parcel", "urgent").answer.answer, false);
  // Offered options do not apply to a yes/no question.
  assert.deepEqual(
    ask(table, "urgent help", "urgent", { options: ["maybe"] }).answer,
    ask(table, "urgent help", "urgent").answer,
  );
});

Deno.test("reasonInWords() explains every flag in one sentence", () => {
  const strict = withSettings(table, {
    min_radius: 1000,
    force_thresholds: { coin: 0 },
  });
  const sentences = new Set<string>();
  const assessments = [
    ask(table, CLEAR, "topic"),
    ask(table, MIXED, "topic"),
    ask(table, "", "topic"),
    ask(table, CLEAR, "nope"),
    ask(table, CLEAR, "topic", { options: ["x"] }),
    ask(withSettings(table, { serve_new_options: true }), CLEAR, "topic", {
      options: ["x"],
    }),
    ask(table, CLEAR, "topic", { options: ["billing"] }),
    ask(table, CLEAR, "coin"),
    ask(table, CLEAR, "topic", {}, LOUD_GUARD),
    ask(strict, CLEAR, "topic", { exposed: true }),
    ask(strict, CLEAR, "coin"),
  ];
  const flags = new Set(assessments.map((a) => a.answer.flag));
  assert.equal(flags.size, assessments.length, "one case per flag");
  for (const a of assessments) {
    const s = reasonInWords(a);
    assert.ok(
      s.length > 10 && !s.includes("\n") && !s.includes("undefined"),
      s,
    );
    sentences.add(s);
  }
  assert.equal(sentences.size, assessments.length);
  assert.match(
    reasonInWords(ask(table, MIXED, "topic")),
    /below the threshold/,
  );
});

Deno.test("assess() withholds certification from a single foreign text with drift", async (t) => {
  const foreign = "zqxj vbnmw ploktr qwyzz xxv";
  // With threshold 0, urgent certifies every confidence: only a drift rule can withhold this answer.
  const base = withQuestion(table, "urgent", {
    calibration: {
      ...table.byName.get("urgent")!.calibration,
      status: "calibrated",
      threshold: 0,
    },
  });
  const urgent = base.byName.get("urgent")!;
  const drift = (patch: Partial<TableSettings["drift"]>) =>
    withSettings(base, { drift: { ...base.settings.drift, ...patch } });
  await t.step("when most of its buckets are unseen (max_novelty)", () => {
    assert.ok(prepareText(table, stateOf(table), foreign).novelty > 0.9);
    assert.equal(
      ask(drift({ single_p: 0, max_novelty: 0.5 }), foreign, "urgent").answer
        .flag,
      "drift",
    );
    assert.equal(
      ask(drift({ single_p: 0, max_novelty: 1 }), foreign, "urgent").answer
        .certified,
      true,
    );
  });
  await t.step(
    "when its unseen share is above every calibration text's (single_p)",
    () => {
      // Only a share above every calibration share (p-value 1 / (n + 1)) fails.
      const strict = drift({
        single_p: 1.5 / (urgent.drift.novelty.length + 1),
        max_novelty: 1,
      });
      assert.equal(ask(strict, foreign, "urgent").answer.flag, "drift");
      assert.equal(
        ask(strict, "my refund please", "urgent").answer.certified,
        true,
      );
    },
  );
  await t.step("only from min_novelty up", () => {
    const share = prepareText(table, stateOf(table), foreign).novelty;
    const rule = { single_p: 0.999, max_novelty: 1 };
    assert.equal(
      ask(drift({ ...rule, min_novelty: share }), foreign, "urgent").answer
        .flag,
      "drift",
    );
    assert.equal(
      ask(drift({ ...rule, min_novelty: share + 1e-6 }), foreign, "urgent")
        .answer.certified,
      true,
    );
  });
});

Deno.test("reasonInWords() names the drift guard's state when given it", () => {
  const quiet = {
    status: "quiet" as const,
    observed: 12,
    alarmed_at: null,
    evidence: 0.42,
    alarm_level: 200,
    alarms: 0,
    clears: 0,
  };
  const a = ask(table, CLEAR, "topic");
  assert.match(
    reasonInWords(a, { drift: quiet }),
    /Drift guard: quiet \(evidence 0\.42 of 200, after 12 requests\)\.$/,
  );
  const alarmed = {
    ...quiet,
    status: "alarmed" as const,
    alarmed_at: 9,
    evidence: 250,
  };
  const held = ask(table, CLEAR, "topic", {}, LOUD_GUARD);
  const s = reasonInWords(held, { drift: alarmed });
  assert.match(s, /alarm stands/);
  assert.match(s, /alarmed since request 9 .*evidence 250 of 200/);
  // Without the guard's state, the single-sentence verdict is unchanged.
  assert.ok(!reasonInWords(a).includes("Drift guard"));
});

Deno.test("assess() answers stay intact after later calls reuse the engine's scratch buffers", () => {
  const first = ask(table, CLEAR, "topic");
  const snapshot = structuredClone(first);
  for (const text of [MIXED, "refund my invoice now", "password reset"]) {
    ask(table, text, "topic");
    ask(table, text, "urgent");
  }
  assert.deepEqual(first, snapshot);
});

Deno.test("prepareText() scores and novelty are the same from a cold and a warm word cache", () => {
  const texts = [CLEAR, MIXED, "zzqx parcel blorf", "parcel parcel invoice"];
  const cold = () => new TableState(table);
  const warm = cold();
  for (const t of texts) ask(table, t, "topic", {}, QUIET_GUARD, warm);
  for (const t of texts) {
    const f = prepareText(table, cold(), t).features;
    // Counted directly: the share of buckets without a row.
    const all = [...f.wordBuckets.flatMap((b) => [...b]), ...f.bigramBuckets];
    const unseen = all.filter((b) => table.rowOf[b]! < 0).length;
    assert.equal(prepareText(table, cold(), t).novelty, unseen / all.length, t);
    assert.equal(prepareText(table, warm, t).novelty, unseen / all.length, t);
    // Cached word vectors give exactly the uncached scores.
    const fresh = [...scoreText(table, topic, f)];
    const kept = prepareText(table, warm, t);
    const slot = warm.question(topic).vectorSlot;
    assert.ok(
      kept.entries.every((id) => warm.words.vectorAt(id, slot) >= 0),
    );
    assert.deepEqual(
      [...scoreEntries(table, warm, topic, kept.features, kept.entries)],
      fresh,
      t,
    );
  }
  assert.ok(warm.words.size > 0);
});

Deno.test("WordCache keeps no more than its budget, and answers past it are unchanged", () => {
  const tiny = new TableState(table, { wordCacheBytes: 2_000 });
  const roomy = new TableState(table);
  const many = Array.from({ length: 200 }, (_, i) => `parcel word${i} refund`);
  for (const t of many) {
    assert.deepEqual(
      ask(table, t, "topic", {}, QUIET_GUARD, tiny),
      ask(table, t, "topic", {}, QUIET_GUARD, roomy),
      t,
    );
  }
  assert.ok(tiny.words.bytes <= 2_000, `${tiny.words.bytes} bytes`);
  assert.ok(tiny.words.size < roomy.words.size);
});
