import assert from "node:assert/strict";
import {
  type CalibrationBand,
  calibrationBands,
  FEEDBACK_ALARM_RATE,
  FeedbackCheck,
} from "../src/guarantee/feedback_check.ts";
import { clopperPearsonBounds } from "../src/guarantee/distributions.ts";
import { LiveCertificate } from "../src/guarantee/live_certificate.ts";
import { liveGrid } from "../src/guarantee/live_evidence.ts";
import { binomialTail } from "../src/guarantee/distributions.ts";
import { rng } from "./_fixtures.ts";

const ALPHA = 0.05;
const DELTA = 0.05;
/** Candidates at certified shares 5%, 10%, ..., 100% (as in engine_live_test.ts). */
const GRID = Array.from({ length: 20 }, (_, i) => 1 - 0.5 * (i + 1) / 20);

/** Confidence uniform on [0.5, 1]; the model disagrees with probability `a ((1 - c) / 0.5)^k`. */
function world(a: number, k = 1.5) {
  return (c: number) => a * Math.pow((1 - c) / 0.5, k);
}

/** Calibration bands of `n` answers of `error` over the live grid of `bundle`. */
function calibrate(
  error: (c: number) => number,
  bundle: number,
  n: number,
  seed: number,
): CalibrationBand[] {
  const random = rng(seed);
  const conf = Array.from({ length: n }, () => 0.5 + 0.5 * random());
  const wrong = conf.map((c) => random() < error(c) ? 1 : 0);
  return calibrationBands(conf, wrong, liveGrid(GRID, bundle));
}

/**
 * How the proxy answers: honestly, echoing the table, or lying on audits;
 * or echoing part of it: the audits only (`echo-audits`, uncertified
 * answers reported honestly), the feedback on uncertified answers only
 * (`echo-feedback`), or each labelled answer at random with probability 1/2
 * (`echo-half`).
 */
type Proxy =
  | "honest"
  | "echo"
  | "liar"
  | "echo-audits"
  | "echo-feedback"
  | "echo-half";

interface Run {
  /** Labelled answers counted when the first alarm rose (null: none). */
  agreeAt: number | null;
  disagreeAt: number | null;
  /** Whether the threshold in force was ever more lenient than the bundle's. */
  lenient: boolean;
  /** Decisions served before it first was (null: never). */
  lenientAt: number | null;
  /** Whether it was ever more lenient while an alarm stood. */
  lenientAlarmed: boolean;
  /** Whether it was ever stricter than the bundle's (or withdrawn). */
  stricter: boolean;
}

/**
 * One step per calibration size (150, 600 and 3,000 answers) and audit rate
 * in `rates`, named after both (after `prefix`), running `fn` with them.
 */
async function eachSetting(
  t: Deno.TestContext,
  rates: readonly number[],
  prefix: string,
  fn: (calibration: number, rate: number) => void,
): Promise<void> {
  for (const calibration of [150, 600, 3000]) {
    for (const rate of rates) {
      await t.step(
        `${prefix}${calibration} calibration answers, audit rate ${rate}`,
        () => fn(calibration, rate),
      );
    }
  }
}

/**
 * Serves `n` decisions of a stream exchangeable with the calibration (same
 * `error`), certified at the threshold in force, audited at `rate`; the
 * proxy reports every audit and every uncertified answer as `proxy` does.
 * The threshold is read again after every `every` decisions.
 */
function serve(
  error: (c: number) => number,
  bundle: number,
  bands: CalibrationBand[],
  n: number,
  rate: number,
  proxy: Proxy,
  seed: number,
  every = 25,
): Run {
  const random = rng(seed);
  const live = new LiveCertificate(GRID, bundle, {
    alpha: ALPHA,
    delta: DELTA,
    auditRate: rate,
  }, bands);
  let state = live.decide();
  let labelled = 0;
  const run: Run = {
    agreeAt: null,
    disagreeAt: null,
    lenient: false,
    lenientAt: null,
    lenientAlarmed: false,
    stricter: false,
  };
  for (let i = 0; i < n; i++) {
    const c = 0.5 + 0.5 * random();
    const wrong = random() < error(c);
    const ok = state.threshold !== null && c >= state.threshold;
    const audited = ok && random() < rate;
    live.recordDecision(c, ok, audited);
    if (audited) {
      const echoed = proxy === "echo" || proxy === "echo-audits" ||
        (proxy === "echo-half" && random() < 0.5);
      live.recordAudit(c, echoed ? false : proxy === "liar" ? true : wrong);
      labelled++;
    }
    if (!ok) {
      const echoed = proxy === "echo" || proxy === "echo-feedback" ||
        (proxy === "echo-half" && random() < 0.5);
      live.recordFeedback(c, echoed ? false : wrong);
      labelled++;
    }
    if (i % every === every - 1 || i === n - 1) {
      state = live.decide();
      const alarms = live.policy().alarms ?? 0;
      if (alarms & 1) run.agreeAt ??= labelled;
      if (alarms & 2) run.disagreeAt ??= labelled;
      if (state.threshold === null || state.threshold > bundle) {
        run.stricter = true;
      }
      if (state.threshold !== null && state.threshold < bundle) {
        run.lenient = true;
        run.lenientAt ??= i + 1;
        if (alarms !== 0) run.lenientAlarmed = true;
      }
    }
  }
  return run;
}

/** Most false alarms in `runs` runs that a true rate of `rate` allows (one-sided binomial, 0.1%). */
function allowedAlarms(runs: number, rate: number): number {
  let k = 0;
  while (1 - binomialTail(k, runs, rate) > 0.001) k++;
  return k;
}

Deno.test("calibrationBands() counts the answers between consecutive candidates; withheld and below-grid ones in no band", () => {
  const bands = calibrationBands(
    [0.95, 0.91, 0.85, 0.5, -1, 0.3],
    [0, 1, 1, 0, 1, 1],
    [0.9, 0.8, 0.4],
  );
  assert.deepEqual(bands, [
    { lower: 0.9, answers: 2, disagreements: 1 },
    { lower: 0.8, answers: 1, disagreements: 1 },
    { lower: 0.4, answers: 1, disagreements: 0 },
  ]);
  assert.throws(
    () => new FeedbackCheck(bands, [0.9, 0.8], 0.8),
    /do not match the live candidates/,
  );
  const b = clopperPearsonBounds(5, 100, 0.001);
  assert.ok(b.lower > 0 && b.lower < 0.05 && b.upper > 0.05 && b.upper < 0.2);
  assert.deepEqual(clopperPearsonBounds(0, 0, 0.001), { lower: 0, upper: 1 });
});

Deno.test("an honest proxy on exchangeable traffic raises the feedback alarm within the stated rate, at several calibration sizes, audit rates and stream lengths", async (t) => {
  // The stated rate is FEEDBACK_ALARM_RATE (1%) per question over the whole
  // stream, both alarms together; each configuration runs 60 streams, each
  // with its own calibration draw. Pooled over all configurations the
  // count must stay within what 1% allows. Every other stream serves a
  // bundle whose threshold is too lenient for alpha (0.6: 8.6% among the
  // answers it certifies), so honest audits refute it and the threshold
  // moves stricter while the stream runs: answers of the bands between are
  // then reported, not audited, and the regions of both tests must keep
  // their level through that too.
  const error = world(0.3);
  let runs = 0;
  let alarms = 0;
  await eachSetting(t, [0.02, 0.05, 0.2], "", (calibration, rate) => {
    let raised = 0;
    let moved = 0;
    for (let r = 0; r < 60; r++) {
      const seed = calibration * 7 + Math.round(rate * 1000) * 131 + r;
      const bundle = r % 2 === 0 ? 0.75 : 0.6;
      const bands = calibrate(error, bundle, calibration, seed);
      // Stream lengths: alarms latch, so the longest stream counts
      // every alarm a shorter one would have raised.
      const run = serve(
        error,
        bundle,
        bands,
        12_000,
        rate,
        "honest",
        seed + 1,
      );
      if (run.agreeAt !== null || run.disagreeAt !== null) raised++;
      if (run.stricter) moved++;
    }
    runs += 60;
    alarms += raised;
    console.log(
      `honest proxy, ${calibration} calibration answers, audit rate ${rate}: alarm in ${raised}/60 streams of 12,000 decisions (threshold moved stricter in ${moved})`,
    );
    assert.ok(
      raised <= allowedAlarms(60, FEEDBACK_ALARM_RATE),
      `${raised}`,
    );
  });
  assert.ok(
    alarms <= allowedAlarms(runs, FEEDBACK_ALARM_RATE),
    `${alarms} of ${runs}`,
  );
});

Deno.test("the level is not loose: point estimates in place of the calibration bounds raise false alarms on honest streams", () => {
  // The same honest streams, checked against each band's calibration rate
  // itself (what the bounds guard against): the alarm then rises far more
  // often than 1%, so the bounds are what keeps the stated rate.
  const error = world(0.3);
  let raised = 0;
  const runs = 40;
  for (let r = 0; r < runs; r++) {
    const bands = calibrate(error, 0.75, 150, 900 + r);
    const pointCheck = new PointCheck(bands);
    const random = rng(5000 + r);
    const labelled = new Float64Array(bands.length);
    const disagreed = new Float64Array(bands.length);
    const live = new LiveCertificate(GRID, 0.75, {
      alpha: ALPHA,
      delta: DELTA,
      auditRate: 0.05,
    }, bands);
    for (let i = 0; i < 12_000; i++) {
      const c = 0.5 + 0.5 * random();
      if (c >= 0.75 && random() >= 0.05) continue; // certified, not audited
      const j = live.candidateOf(c);
      labelled[j]!++;
      if (random() < error(c)) disagreed[j]!++;
    }
    if (pointCheck.alarmed(labelled, disagreed)) raised++;
  }
  console.log(
    `point estimates in place of bounds: alarm in ${raised}/${runs} honest streams`,
  );
  assert.ok(raised > allowedAlarms(runs, FEEDBACK_ALARM_RATE), `${raised}`);
});

/** The feedback check with each band's calibration rate as both bounds (what the real check must not do). */
class PointCheck {
  readonly #check: FeedbackCheck;
  constructor(bands: CalibrationBand[]) {
    // Bands whose bounds are the point estimate: a band of n answers and k
    // disagreements stands for many answers at exactly that rate.
    const scaled = bands.map((b) => ({
      lower: b.lower,
      answers: b.answers * 10_000,
      disagreements: b.disagreements * 10_000,
    }));
    this.#check = new FeedbackCheck(
      scaled,
      bands.map((b) => b.lower),
      0.75,
    );
  }
  alarmed(labelled: Float64Array, disagreed: Float64Array): boolean {
    return this.#check.evaluate({ labelled, disagreed }).alarms !== 0;
  }
}

Deno.test("an echoing proxy is named within a few hundred labelled answers and never moves the threshold below the bundle's", async (t) => {
  // The easy world: an honest proxy loosens the bundle's threshold here
  // (engine_live_test.ts), so an echo that is not caught would too.
  const error = world(0.25);
  await eachSetting(t, [0.02, 0.05, 0.2], "", (calibration, rate) => {
    const needed: number[] = [];
    for (let r = 0; r < 20; r++) {
      const seed = 40_000 + calibration + Math.round(rate * 100) + r * 17;
      const bands = calibrate(error, 0.8, calibration, seed);
      const run = serve(
        error,
        0.8,
        bands,
        20_000,
        rate,
        "echo",
        seed + 3,
      );
      assert.equal(run.lenient, false, `run ${r} went lenient`);
      needed.push(run.agreeAt ?? Infinity);
    }
    needed.sort((a, b) => a - b);
    console.log(
      `echo, ${calibration} calibration answers, audit rate ${rate}: named after ${
        needed[10]
      } labelled answers (median; worst ${needed[needed.length - 1]})`,
    );
    // With 150 calibration answers (about 10 a band) the bands' bounds
    // are wide and naming takes thousands: the echo still never goes
    // lenient. From 600 on, a few hundred.
    if (calibration >= 600) {
      assert.ok(
        needed[needed.length - 1]! <= (calibration >= 3000 ? 250 : 800),
        `${needed}`,
      );
    }
  });
});

Deno.test("an honest proxy still loosens in the easy world once the check could have caught an echo", () => {
  // The gate needs each region's power: the audits alone must be able to
  // catch an echo of them. Here that takes about 25,000 decisions (audit
  // rate 0.2): by 20,000, 8 of these 20 streams had loosened (16 before
  // the regions were split); by 40,000, nearly all.
  const error = world(0.25);
  const at: number[] = [];
  for (let r = 0; r < 20; r++) {
    const bands = calibrate(error, 0.8, 3000, 700 + r);
    const run = serve(error, 0.8, bands, 40_000, 0.2, "honest", 800 + r);
    assert.equal(run.lenientAlarmed, false);
    at.push(run.lenientAt ?? Infinity);
  }
  const by = (n: number) => at.filter((x) => x <= n).length;
  console.log(
    `honest proxy, easy world: loosened in ${
      by(20_000)
    }/20 streams by 20,000 decisions, ${by(40_000)}/20 by 40,000`,
  );
  assert.ok(by(40_000) >= 16, `loosened in ${by(40_000)}/20`);
});

Deno.test("a lying proxy (a wrong option on every audit) is named within a few audits", async (t) => {
  const error = world(0.3);
  for (const calibration of [150, 600, 3000]) {
    await t.step(`${calibration} calibration answers`, () => {
      const needed: number[] = [];
      for (let r = 0; r < 20; r++) {
        const bands = calibrate(error, 0.75, calibration, 60_000 + r);
        const live = new LiveCertificate(GRID, 0.75, {
          alpha: ALPHA,
          delta: DELTA,
          auditRate: 0.05,
        }, bands);
        const random = rng(61_000 + r);
        let lies = 0;
        while ((live.policy().alarms ?? 0) === 0 && lies < 100) {
          const c = 0.75 + 0.25 * random();
          live.recordDecision(c, true, true);
          live.recordAudit(c, true);
          lies++;
          live.decide();
        }
        assert.equal(live.policy().alarms, 2, `run ${r}`);
        needed.push(lies);
      }
      needed.sort((a, b) => a - b);
      console.log(
        `liar, ${calibration} calibration answers: named after ${
          needed[10]
        } lies (median; worst ${needed[needed.length - 1]})`,
      );
      const most = calibration >= 3000 ? 6 : calibration >= 600 ? 12 : 40;
      assert.ok(needed[needed.length - 1]! <= most, `${needed}`);
    });
  }
});

/**
 * A liar on audits amid honest feedback: every audit answered with a wrong
 * option, every uncertified answer reported honestly. The proxy posts each
 * audit as it comes (the live decision runs after it) and the uncertified
 * answers in requests of 25 decisions. Returns the lies told until the
 * disagrees-too-much alarm rose (null: not named before the lies ran out,
 * the question withdrawn so no audit is given any more, or `most`).
 */
function lieOnAudits(
  error: (c: number) => number,
  bundle: number,
  bands: CalibrationBand[],
  rate: number,
  seed: number,
  most = 60,
): { lies: number | null; withdrawn: boolean; lenient: boolean } {
  const random = rng(seed);
  const live = new LiveCertificate(GRID, bundle, {
    alpha: ALPHA,
    delta: DELTA,
    auditRate: rate,
  }, bands);
  let state = live.decide();
  let lies = 0;
  let lenient = false;
  for (let i = 0; i < 400_000 && lies < most; i++) {
    const c = 0.5 + 0.5 * random();
    const wrong = random() < error(c);
    const ok = state.threshold !== null && c >= state.threshold;
    const audited = ok && random() < rate;
    live.recordDecision(c, ok, audited);
    if (audited) {
      live.recordAudit(c, true);
      lies++;
    } else if (!ok) live.recordFeedback(c, wrong);
    if (audited || i % 25 === 24) {
      state = live.decide();
      if (state.threshold !== null && state.threshold < bundle) lenient = true;
      if ((live.policy().alarms ?? 0) & 2) {
        return { lies, withdrawn: false, lenient };
      }
    }
  }
  return { lies: null, withdrawn: state.threshold === null, lenient };
}

Deno.test("a liar on audits amid honest uncertified feedback is named within 10 lies with 3,000 calibration answers (the liar test per region)", async (t) => {
  // Two worlds: the one above (bundle's threshold 0.75, 50% certified) and
  // one like the BANKING77 table's (85% certified, the table seldom wrong
  // at high confidence). With one test pooling every label, the honest
  // reports (most of the labels, and all of them in the bands the lies
  // made uncertified) buried the lies: never named in these streams.
  const worlds = [
    { name: "50% certified", error: world(0.3), bundle: 0.75 },
    { name: "85% certified", error: world(0.14), bundle: GRID[16]! },
  ];
  for (const w of worlds) {
    await eachSetting(t, [0.02, 0.05, 0.2], `${w.name}, `, (cal, rate) => {
      const needed: number[] = [];
      let withdrawn = 0;
      for (let r = 0; r < 20; r++) {
        const seed = 120_000 + cal * 5 + Math.round(rate * 1000) + r * 37;
        const bands = calibrate(w.error, w.bundle, cal, seed);
        const run = lieOnAudits(w.error, w.bundle, bands, rate, seed + 1);
        assert.equal(run.lenient, false, `run ${r} went lenient`);
        needed.push(run.lies ?? Infinity);
        if (run.withdrawn) withdrawn++;
      }
      needed.sort((a, b) => a - b);
      const named = needed.filter((n) => n < Infinity).length;
      console.log(
        `liar on audits amid honest feedback, ${w.name}, ${cal} calibration answers, audit rate ${rate}: named in ${named}/20 after ${
          needed[10]
        } lies (median; worst ${
          needed[needed.length - 1]
        }); withdrawn unnamed in ${withdrawn}/20`,
      );
      if (cal >= 3000) {
        assert.ok(needed[needed.length - 1]! <= 10, `${needed}`);
      }
    });
  }
});

Deno.test("FeedbackCheck: the liar test weighs audits and reported answers apart, and says where the disagreements are", () => {
  const grid = liveGrid(GRID, 0.75);
  const check = new FeedbackCheck(
    calibrate(world(0.3), 0.75, 3000, 5),
    grid,
    0.75,
  );
  const k = grid.length;
  const zeros = () => new Float64Array(k);
  // Five lies on audits in the strictest band, and 2,000 honest-looking
  // agreements reported in the same band: apart, the lies stand.
  const labelled = zeros();
  const disagreed = zeros();
  const audits = zeros();
  const auditDisagreed = zeros();
  audits[0] = 5;
  auditDisagreed[0] = 5;
  labelled[0] = 2005;
  disagreed[0] = 5;
  const counts = { labelled, disagreed, audits, auditDisagreed };
  const seen = check.evaluate(counts);
  assert.equal(seen.alarms, 2);
  const state = check.state(counts, seen.alarms);
  assert.equal(state.disagreeRegion, "audits");
  assert.equal(state.audits, 5);
  assert.equal(state.auditDisagreed, 5);
  assert.ok(state.disagreeRegionLogCapitals[0] >= check.logBar);
  assert.ok(state.disagreeRegionLogCapitals[1] < 0);
  // The same labels counted as one pool (no audits told apart): no alarm.
  assert.equal(check.evaluate({ labelled, disagreed }).alarms, 0);
  // Reported disagreements alone name the reported answers.
  const reported = {
    labelled: Float64Array.from(labelled),
    disagreed: zeros(),
  };
  reported.labelled.fill(0);
  reported.labelled[0] = 40;
  reported.disagreed[0] = 40;
  const r = check.evaluate(reported);
  assert.equal(r.alarms, 2);
  assert.equal(check.state(reported, r.alarms).disagreeRegion, "reported");
  assert.equal(check.state(reported, 0).disagreeRegion, null);
});

Deno.test("an alarm latches until a reset; a bundle without bands never goes lenient", () => {
  const error = world(0.25);
  const bands = calibrate(error, 0.8, 3000, 1);
  const live = new LiveCertificate(GRID, 0.8, {
    alpha: ALPHA,
    delta: DELTA,
    auditRate: 0.2,
  }, bands);
  for (let i = 0; i < 20; i++) {
    live.recordDecision(0.99, true, true);
    live.recordAudit(0.99, true);
  }
  live.decide();
  assert.equal(live.policy().alarms, 2);
  // Plenty of honest agreement afterwards does not clear it.
  for (let i = 0; i < 5000; i++) {
    live.recordDecision(0.99, true, true);
    live.recordAudit(0.99, false);
  }
  live.decide();
  assert.equal(live.policy().alarms, 2);
  assert.equal(live.state().feedbackCheck!.disagreesTooMuch, true);
  live.reset();
  assert.equal(live.policy().alarms, 0);
  assert.equal(live.generation, 1);
  assert.equal(live.decide().reason, "bundle");
  assert.equal(live.evidence().audited, 0);

  // Without bands, the easy world that loosens with them never does.
  let lenient = 0;
  for (let r = 0; r < 10; r++) {
    const random = rng(90 + r);
    const c0 = new LiveCertificate(GRID, 0.8, {
      alpha: ALPHA,
      delta: DELTA,
      auditRate: 0.2,
    });
    assert.equal(c0.checked, false);
    assert.equal(c0.state().feedbackCheck, null);
    let t = c0.decide().threshold!;
    for (let i = 0; i < 20_000; i++) {
      const c = 0.5 + 0.5 * random();
      const wrong = random() < error(c);
      const ok = c >= t;
      const audited = ok && random() < 0.2;
      c0.recordDecision(c, ok, audited);
      if (audited) c0.recordAudit(c, wrong);
      if (!ok) c0.recordFeedback(c, wrong);
      if (i % 50 === 49) t = c0.decide().threshold!;
      if (t < 0.8) lenient++;
    }
  }
  assert.equal(lenient, 0);
});

Deno.test("an echo alarm sends a lenient threshold in force back to the bundle's; stricter moves stand", () => {
  const error = world(0.25);
  const bands = calibrate(error, 0.8, 3000, 2);
  const grid = liveGrid(GRID, 0.8);
  const bundle = grid.indexOf(0.8);
  const live = new LiveCertificate(GRID, 0.8, {
    alpha: ALPHA,
    delta: DELTA,
    auditRate: 0.2,
  }, bands);
  // A fleet's policy with a lenient candidate in force.
  live.restore(live.evidence(), {
    floor: grid.length,
    inForce: bundle + 2,
    alarms: 0,
  });
  // An echo: uncertified answers far below, all "agreed".
  for (let i = 0; i < 400; i++) live.recordFeedback(0.52, false);
  const d = live.decide();
  assert.equal(live.policy().alarms! & 1, 1);
  assert.equal(d.threshold, 0.8);
  assert.equal(d.reason, "bundle");
  // A stricter policy stands under the alarm.
  live.restore(live.evidence(), {
    floor: bundle,
    inForce: bundle - 1,
    alarms: 1,
  });
  assert.equal(live.decide().reason, "live_stricter");
});

Deno.test("clustered calibration answers count by their effective number: honest clustered traffic stays within the stated rate", () => {
  // Answers come in units of 50 (near-duplicates of one text): a unit's
  // answers share a confidence band and a disagreement rate drawn for the
  // unit (none, or twice the world's), so 3,000 calibration answers tell
  // about as much as 60 units. Live traffic draws fresh units the same way.
  // Counted raw, the bands' bounds are far too narrow.
  const UNIT = 50;
  const unitRate = (random: () => number, c: number) =>
    Math.min(1, world(0.3)(c) * (random() < 0.5 ? 0 : 2));
  const draw = (random: () => number) => {
    const c = 0.5 + 0.5 * random();
    return { c, rate: unitRate(random, c) };
  };
  let raised = 0;
  let raisedRaw = 0;
  const runs = 40;
  for (let r = 0; r < runs; r++) {
    const random = rng(70_000 + r);
    const conf: number[] = [];
    const wrong: number[] = [];
    const units: number[] = [];
    for (let u = 0; u < 60; u++) {
      const { c, rate } = draw(random);
      for (let i = 0; i < UNIT; i++) {
        conf.push(Math.min(1, c + (random() - 0.5) * 1e-4));
        wrong.push(random() < rate ? 1 : 0);
        units.push(u);
      }
    }
    const grid = liveGrid(GRID, 0.75);
    const bands = calibrationBands(conf, wrong, grid, units);
    assert.ok(bands.some((b) => b.effective !== undefined));
    const raw = bands.map(({ effective: _, ...b }) => b);
    const checks = [
      new FeedbackCheck(bands, grid, 0.75),
      new FeedbackCheck(raw, grid, 0.75),
    ];
    const labelled = new Float64Array(grid.length);
    const disagreed = new Float64Array(grid.length);
    const live = new LiveCertificate(GRID, 0.75, {
      alpha: ALPHA,
      delta: DELTA,
      auditRate: 0.2,
    }, bands);
    let alarmed = [false, false];
    for (let u = 0; u < 400; u++) {
      const { c, rate } = draw(random);
      const j = live.candidateOf(c);
      for (let i = 0; i < UNIT; i++) {
        if (c >= 0.75 && random() >= 0.2) continue; // certified, not audited
        labelled[j]!++;
        if (random() < rate) disagreed[j]!++;
      }
      alarmed = alarmed.map((a, k) =>
        a || checks[k]!.evaluate({ labelled, disagreed }).alarms !== 0
      );
    }
    if (alarmed[0]) raised++;
    if (alarmed[1]) raisedRaw++;
  }
  console.log(
    `clustered calibration (units of ${UNIT}): alarm in ${raised}/${runs} honest streams by effective counts, ${raisedRaw}/${runs} by raw counts`,
  );
  assert.ok(raised <= allowedAlarms(runs, FEEDBACK_ALARM_RATE), `${raised}`);
  assert.ok(
    raisedRaw > allowedAlarms(runs, FEEDBACK_ALARM_RATE),
    `${raisedRaw}`,
  );
});

/**
 * The hard world for a partial echo: the bundle's threshold 0.725 is about
 * the most lenient whose rate is within alpha (4.9%); every more lenient
 * candidate is above it (5.6% at 0.7, more below), so a lenient threshold
 * in force certifies wrong answers beyond the promise.
 */
const HARD = world(0.3);
const HARD_BUNDLE = GRID[10]!;

Deno.test("a proxy that echoes only part of the feedback (the audits, or the uncertified answers) never moves the threshold below the bundle's", async (t) => {
  for (const proxy of ["echo-audits", "echo-feedback"] as const) {
    await eachSetting(t, [0.05, 0.2], `${proxy}, `, (calibration, rate) => {
      let lenient = 0;
      let named = 0;
      const runs = 20;
      for (let r = 0; r < runs; r++) {
        const seed = 80_000 + calibration * 3 + Math.round(rate * 100) +
          r * 29;
        const bands = calibrate(HARD, HARD_BUNDLE, calibration, seed);
        const run = serve(
          HARD,
          HARD_BUNDLE,
          bands,
          20_000,
          rate,
          proxy,
          seed + 5,
        );
        if (run.lenient) lenient++;
        if (run.agreeAt !== null) named++;
      }
      console.log(
        `${proxy}, ${calibration} calibration answers, audit rate ${rate}: lenient in ${lenient}/${runs} streams, named in ${named}/${runs}`,
      );
      assert.equal(lenient, 0, `lenient in ${lenient}/${runs}`);
    });
  }
});

Deno.test("a proxy that echoes a random half of the labelled answers is named only as fast as the bands allow (measured; it may loosen first)", async (t) => {
  for (
    const [calibration, rate] of [[150, 0.2], [600, 0.2], [3000, 0.05], [
      3000,
      0.2,
    ]] as const
  ) {
    await t.step(
      `${calibration} calibration answers, audit rate ${rate}`,
      () => {
        const needed: number[] = [];
        let lenient = 0;
        for (let r = 0; r < 20; r++) {
          const seed = 95_000 + calibration + r * 31;
          const bands = calibrate(HARD, HARD_BUNDLE, calibration, seed);
          const run = serve(
            HARD,
            HARD_BUNDLE,
            bands,
            20_000,
            rate,
            "echo-half",
            seed + 7,
          );
          needed.push(run.agreeAt ?? Infinity);
          if (run.lenient) lenient++;
        }
        needed.sort((a, b) => a - b);
        console.log(
          `echo of half, ${calibration} calibration answers, audit rate ${rate}: named after ${
            needed[10]
          } labelled answers (median; worst ${
            needed[needed.length - 1]
          }), lenient in ${lenient}/20`,
        );
        // Only as fast as the bands' bounds allow: with 3,000 calibration
        // answers after about 6,000 labelled answers; with fewer, not within
        // these streams (docs/live.md, what is still not caught).
        if (calibration >= 3000) {
          assert.ok(needed[10]! <= 8000, `${needed}`);
        }
      },
    );
  }
});

Deno.test("FeedbackCheck: an echo of either region never passes the leniency gate, whatever the other region's counts", () => {
  // Counts drawn at random: one region echoed (no disagreement in it), the
  // other anything. Whenever the gate's power condition holds, the alarm
  // has risen on the same counts, so the gate stays shut.
  const grid = liveGrid(GRID, HARD_BUNDLE);
  const split = grid.indexOf(HARD_BUNDLE) + 1;
  const random = rng(123);
  let powered = 0;
  for (let r = 0; r < 400; r++) {
    const check = new FeedbackCheck(
      calibrate(HARD, HARD_BUNDLE, [600, 3000][r % 2]!, 300 + r),
      grid,
      HARD_BUNDLE,
    );
    assert.equal(check.split, split);
    const echoed = r % 4 < 2 ? 0 : 1;
    const labelled = new Float64Array(grid.length);
    const disagreed = new Float64Array(grid.length);
    const scale = Math.floor(random() * 8000);
    for (let j = 0; j < grid.length; j++) {
      labelled[j] = Math.floor(random() * scale / grid.length);
      const region = j < split ? 0 : 1;
      if (region !== echoed) {
        disagreed[j] = Math.floor(labelled[j]! * random() * 0.4);
      }
    }
    const seen = check.evaluate({ labelled, disagreed });
    const state = check.state({ labelled, disagreed }, seen.alarms);
    if (state.echoRegionLogCapitals[echoed]! >= check.regionLogBar) {
      powered++;
      assert.equal(seen.alarms & 1, 1, `draw ${r}`);
    }
    assert.equal(seen.echoPowered, false, `draw ${r}`);
  }
  // The draws reach the power often enough to mean something.
  assert.ok(powered >= 100, `${powered}`);
  assert.throws(
    () => new FeedbackCheck(calibrate(HARD, HARD_BUNDLE, 600, 1), grid, 0.123),
    /not a live candidate/,
  );
});
