/**
 * JSON Schema of the `learn` section of `/v1/stats`, sent by a learning
 * service (`serve --learn DIR`), and its type.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import { count, nullable } from "../wire/mod.ts";

/** Why a question's test certified nothing, in one word. */
const Failure = Type.Union([
  Type.Literal("not_tested"),
  Type.Literal("few"),
  Type.Literal("withheld"),
  Type.Literal("all_wrong"),
  Type.Literal("misplaced"),
  Type.Literal("too_many"),
  Type.Literal("held"),
], {
  description:
    "not_tested: its plan gave the test too little chance of passing, so no share of delta was spent; few: fewer calibration answers than any pass needs; withheld: too few left once the out-of-scope rule withholds some; all_wrong: even the most confident answers disagree at alpha or more; misplaced: the plan put its level where too many disagreed, though the most confident answers would have passed with the whole level; too_many: no top set would have passed even so; held: the question is held for options the model added.",
});

/** One pass of a retrain. */
const Retrain = Type.Object({
  retrain: Type.Optional(Type.Integer({
    minimum: 1,
    description:
      "Which retrain this is a pass of (a retrain may make a quick pass with the table alone, then one with the encoder).",
  })),
  encoder: Type.Optional(Type.Boolean({
    description: "True for a pass that trained with the encoder.",
  })),
  tested: Type.Optional(Type.Record(Type.String(), Type.Number(), {
    description:
      "Per question whose calibration test this pass ran, the level it ran at: its share of delta.",
  })),
  failures: Type.Optional(Type.Record(Type.String(), Failure, {
    description:
      "Per question the pass's bundle left uncalibrated, why in one word.",
  })),
  started: Type.String({ format: "date-time" }),
  ended: Type.String({ format: "date-time" }),
  labels: count,
  seconds: Type.Number({ minimum: 0 }),
  swapped: Type.Boolean({
    description:
      "True when the new bundle was written to DIR/bundle and swapped in.",
  }),
  reason: Type.String({ description: "Why it was or was not, in words." }),
  test_answers: count,
  certified_before: nullable(count),
  certified_after: nullable(count),
  calibrated: count,
  questions: count,
  error: Type.Optional(Type.String()),
}, {
  description:
    "One retrain: when, on how many labels, and the held-out answers (the new split's test part) each bundle certifies rightly, the one in force (before) and the new one (after).",
});

/** One stretch of traffic. */
const Stretch = Type.Object({
  from: Type.String({ format: "date-time" }),
  to: Type.String({ format: "date-time" }),
  decisions: count,
  certified: count,
  calls: Type.Integer({
    minimum: 0,
    description:
      "Model calls the decisions cost: uncertified answers and audits.",
  }),
});

/** One replica's share of a learning fleet's pooled log. */
const ReplicaShare = Type.Object({
  labels: Type.Integer({
    minimum: 0,
    description: "Labels (feedback lines) this replica took.",
  }),
  decisions: Type.Integer({
    minimum: 0,
    description: "Decisions it made (its ledger lines).",
  }),
  picked: Type.Integer({
    minimum: 0,
    description: "Of them, picked by the calibration coin.",
  }),
  picks_answered: Type.Integer({
    minimum: 0,
    description:
      "Picked decisions of this replica some replica took a label for: they calibrate.",
  }),
});

/** A learning fleet as one replica sees it. */
const FleetLearning = Type.Object({
  replica: Type.String(),
  learner: Type.Union([Type.String(), Type.Null()], {
    description:
      "The replica that learns now (null: none has written its status for 30 s).",
  }),
  lease: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "The fence number of the learner's lease.",
  }),
  learner_status_age_s: Type.Integer({ minimum: 0 }),
  terms_here: Type.Integer({
    minimum: 0,
    description: "Times this replica took the lease since it started.",
  }),
  pool: Type.Object({
    read: Type.Integer({ minimum: 0 }),
    last: Type.String(),
    reachable: Type.Union([Type.Boolean(), Type.Null()]),
  }, {
    description:
      "The fleet's pooled log as read into this replica's folder: chunks read since the start, the last pool id.",
  }),
  outbox: Type.Object({
    waiting: Type.Integer({ minimum: 0 }),
    shipped: Type.Integer({ minimum: 0 }),
  }, {
    description:
      "This replica's chunks on disk that the pool is not known to have yet, and those it took.",
  }),
  bundle: Type.Union([
    Type.Object({
      id: Type.String(),
      version: Type.Integer({ minimum: 0 }),
      fence: Type.Integer({ minimum: 0 }),
      replica: Type.String(),
      published: Type.String(),
    }),
    Type.Null(),
  ], {
    description: "The fleet's bundle in force here, as the store published it.",
  }),
  bundle_swaps: Type.Integer({ minimum: 0 }),
  replicas: Type.Record(Type.String(), ReplicaShare, {
    description: "Per replica, its share of the pooled log.",
  }),
});

/** The `learn` section of `/v1/stats`. */
export const LearnStats = Type.Object({
  dir: Type.String(),
  labels: Type.Integer({
    minimum: 0,
    description:
      "Labels counted: the labelled lines the folder's feedback log held at the start (or the last retrain's labels, if more), and every feedback item written since.",
  }),
  next_retrain_at: Type.Integer({
    minimum: 0,
    description: "The labels at which the next retrain is due.",
  }),
  labels_per_s: Type.Number({
    minimum: 0,
    description:
      "The pace labels come at: feedback items written over the last minute, a second.",
  }),
  next_retrain_in_s: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description:
      "Seconds until the next retrain is due at that pace; null before a pace.",
  }),
  advice: Type.Record(
    Type.String(),
    Type.Object({
      more_labels: Type.Object({
        low: Type.Integer({ minimum: 0 }),
        high: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      }, {
        description:
          "Labels still needed by the learning curve (its 80% range; high null for over low), moved by the labels since it was read and narrowed to the overlap with the ranges before.",
      }),
      minutes: Type.Union([
        Type.Object({
          low: Type.Integer({ minimum: 0 }),
          high: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        }),
        Type.Null(),
      ], { description: "The same at labels_per_s, in minutes." }),
      labels_per_s: Type.Number({ minimum: 0 }),
      moved: Type.Boolean({
        description:
          "The last retrain's range did not overlap the one before: the estimate moved rather than narrowed.",
      }),
    }),
    {
      description:
        "Per question no bundle calibrates yet, what would help: labels, and when at the pace they come (there is no flag to give a learning service for it).",
    },
  ),
  running: Type.Boolean(),
  retrains: count,
  swaps: count,
  held: Type.Array(Type.String(), {
    description:
      "Questions not certified while the model answers options their bundle has not learned yet.",
  }),
  unlearned: Type.Array(Type.String(), {
    description:
      "Questions feedback has shown that the bundle has not learned yet (answered uncertified, flag uncalibrated).",
  }),
  tests: Type.Record(
    Type.String(),
    Type.Object({
      tests: count,
      spent: Type.Number({
        minimum: 0,
        description: "The share of delta its tests have spent together.",
      }),
      next_level: Type.Number({
        minimum: 0,
        description: "The level its next test will run at.",
      }),
    }),
    {
      description:
        "Per question, the calibration tests its retrains ran: each runs at a share of delta fixed in advance, and all of them together never spend more than delta (one promise over every retrain; docs/guarantee.md).",
    },
  ),
  history: Type.Array(Retrain, {
    description: "The last passes of retrains, oldest first.",
  }),
  series: Type.Array(Stretch, {
    description:
      "The traffic per stretch since the start (older stretches merged in pairs past 500): decisions, certified answers, model calls.",
  }),
  learner: Type.Optional(Type.Boolean({
    description:
      "A fleet that learns (--learn with --live-store): true on the replica that learns now. The other fields are then the fleet's learner's, as it last wrote them to the store.",
  })),
  fleet: Type.Optional(FleetLearning),
});

/** The `learn` section of `/v1/stats`. */
export type LearnStats = Static<typeof LearnStats>;
