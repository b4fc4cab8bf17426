/**
 * JSON Schemas of the bodies the decision routes and the playground read and
 * write, and of the health document and the error body. Field names are the
 * interface's, exactly.
 *
 * Request schemas say what the routes accept (optional fields may also be
 * null, meaning absent). Response schemas list the fields the service
 * always or sometimes sends and allow further ones, so that a client
 * generated from them keeps working when a later release adds a field.
 *
 * The decision replies are written byte by byte (`../reply_parts.ts`) and
 * the requests checked by hand-written parsers whose messages name the
 * field (`../fields.ts`), so only the playground reply and the health
 * document take their TypeScript types from here.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import { MAX_BATCH_ITEMS } from "../batch.ts";
import {
  confidence,
  count,
  Flag,
  type JsonSchema,
  nonNegative,
  nullable,
  nullableNumber,
  probability,
  radius,
  recordOf,
  ref,
} from "./schema_parts.ts";

const state = (description: string) =>
  Type.Unsafe<string | Record<string, unknown>>({
    type: ["string", "object"],
    description,
  });
const exposed = Type.Optional(nullable(Type.Boolean(), {
  description:
    "Treat the input as adversarial: answers that a few inserted words could flip are not certified (flag low_radius). Default false.",
}));
const top = Type.Optional(nullable(Type.Integer({ minimum: 1 }), {
  description:
    "Print only this many of a choice answer's probabilities: the most probable options, the answer first, then the others from the most probable down (ties in option order). Absent or null: every option in option order, as without it. The answer, its confidence and its certification do not change; yes/no answers are not affected.",
  examples: [3],
}));
const model = Type.Optional(nullable(Type.String(), {
  description: 'Echoed in the response; any value works. Default "table".',
}));
const questionType = Type.String({
  description:
    "choice, predicate or noul. A type that does not fit the bundle question (score included) is answered with flag unsupported.",
  examples: ["choice", "predicate", "noul"],
});
const instructions = Type.Optional(nullable(Type.String(), {
  description: "Accepted and ignored: the table answers from its traces.",
}));
const yes = Type.Number({
  minimum: 0,
  maximum: 1,
  description: "Probability of yes.",
});

/** The audit id of an answer picked for audit. */
const audit = Type.Optional(Type.String({
  description:
    "Present only when this certified answer was picked for audit: ask the reference model and send its answer to /v1/feedback with this id.",
}));

/** Every error body. */
export const ErrorBody = Type.Object({ error: Type.String() }, {
  description: "Every error body: one field, a message saying what was wrong.",
  additionalProperties: false,
});

/** One answer of `/v1/decide`. */
export const Answer = Type.Object({
  choice: Type.Optional(
    Type.String({ description: "The table's best option." }),
  ),
  answer: Type.Optional(Type.Boolean({ description: "The yes/no answer." })),
  confidence,
  certified: Type.Boolean({
    description: "true: serve it; false: ask the language model.",
  }),
  flag: ref("Flag", Flag),
  radius: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description:
      "Inserted words needed to flip the answer (a lower bound); null when none can.",
  }),
  probabilities: Type.Optional(recordOf(probability, {
    description:
      "Probability of every option; only the offered options when narrowed (they sum to 1); with top, only the top most probable, the answer first.",
  })),
  probability: Type.Optional(yes),
  tier: Type.Optional(Type.Union([
    Type.Literal("table"),
    Type.Literal("semantic"),
  ], {
    description:
      "Which tier answered: the table, or the second tier (a sentence encoder) asked because the table was not sure. Present only when the bundle served has a second tier (format 4).",
  })),
  audit,
}, {
  description:
    "One answer of /v1/decide. A choice answer has choice and probabilities, a yes/no answer has answer and probability; an answer to a question the bundle does not have has neither (flag unsupported).",
  dependentRequired: { choice: ["probabilities"], answer: ["probability"] },
});

/** The body of `/v1/decide`. */
export const DecideRequest = Type.Object({
  state: state(
    "The text to decide on; an object is serialised with JSON.stringify first.",
  ),
  questions: Type.Optional(nullable(
    recordOf(nullable(Type.Object({
      criteria: Type.Optional(nullable(Type.Array(Type.String()), {
        description: "Offered options; empty or absent: all learned.",
      })),
    }))),
    {
      description:
        "Answer only these questions (absent: all of the bundle's). An entry's criteria narrows a choice question to those options.",
    },
  )),
  exposed,
  top,
});

/** The body of `/v1/decide/batch`. */
export const DecideBatchRequest = Type.Union([
  Type.Object({
    items: Type.Array(ref("DecideRequest", DecideRequest), {
      maxItems: MAX_BATCH_ITEMS,
    }),
  }, { additionalProperties: false }),
  Type.Array(ref("DecideRequest", DecideRequest), {
    maxItems: MAX_BATCH_ITEMS,
  }),
], {
  description:
    `Up to ${MAX_BATCH_ITEMS} /v1/decide bodies, as {"items": [...]} or the array alone; the whole body stays under the 1 MiB limit.`,
});

/** The reply of `/v1/decide`. */
export const DecideResponse = Type.Object({
  answers: recordOf(ref("Answer", Answer), {
    description: "One answer per question asked, keyed by question name.",
  }),
  latency_us: Type.Number({
    minimum: 0,
    description: "Microseconds from the body received to the answers ready.",
  }),
});

/** The reply of `/v1/decide/batch`. */
export const DecideBatchResponse = Type.Object({
  items: Type.Array(ref("DecideResponse", DecideResponse), {
    description:
      "One /v1/decide reply per item, in order; an item's latency_us is its own time plus an equal share of reading the batch.",
  }),
  latency_us: Type.Number({
    minimum: 0,
    description: "Microseconds from the body received to the last item.",
  }),
});

/** A question of `/v1/decisions`. */
export const DecisionsQuestion = Type.Object({
  type: questionType,
  name: Type.String({ description: "A question of the bundle." }),
  instructions,
  choices: Type.Optional(nullable(
    Type.Array(Type.Union([
      Type.Object({ value: Type.String() }),
      Type.String(),
    ])),
    {
      description:
        "Offered options, narrowing a choice question; empty or absent: all learned. Plain strings are accepted too.",
    },
  )),
});

/** The body of `/v1/decisions`. */
export const DecisionsRequest = Type.Object({
  model,
  input: Type.String({ description: "The text to decide on." }),
  questions: Type.Array(ref("DecisionsQuestion", DecisionsQuestion)),
  exposed,
  top,
});

/** The `service` object of a decision-model answer. */
export const Service = Type.Object({
  source: Type.Union([Type.Literal("table"), Type.Literal("semantic")], {
    description:
      "table: the table answered; semantic: the second tier (a sentence encoder) answered, asked because the table was not sure (bundles of format 4 only).",
  }),
  certified: Type.Boolean(),
  flag: ref("Flag", Flag),
  audit,
});

/** One answer of `/v1/decisions`. */
export const DecisionsAnswer = Type.Object({
  type: Type.String(),
  name: Type.String(),
  choice: Type.Optional(Type.String()),
  confidence,
  probabilities: Type.Optional(Type.Array(Type.Object({
    value: Type.String(),
    probability,
  }))),
  probability: Type.Optional(yes),
  noul: Type.Optional(yes),
  answer: Type.Optional(Type.Boolean()),
  service: ref("Service", Service),
}, {
  description:
    "A choice answer has choice and probabilities; predicate has probability; noul has probability, noul and answer; an unsupported question has only type, name, confidence and service.",
  dependentRequired: {
    choice: ["probabilities"],
    noul: ["probability", "answer"],
  },
});

/** The `service` object of a decision-model reply. */
export const ResponseService = Type.Object({
  latency_us: nonNegative,
  source: Type.Literal("table"),
});

/** The reply of `/v1/decisions`. */
export const DecisionsResponse = Type.Object({
  object: Type.Literal("decision"),
  model: Type.String(),
  answers: Type.Array(ref("DecisionsAnswer", DecisionsAnswer), {
    description: "In question order.",
  }),
  usage: Type.Object({
    input_tokens: count,
    output_tokens: count,
    total_tokens: count,
  }, { description: "All zero for table answers." }),
  service: ref("ResponseService", ResponseService),
});

/** A question of `/v1/altdecisions`. */
export const AltQuestion = Type.Object({
  type: questionType,
  instructions,
  criteria: Type.Optional(Type.Union([
    recordOf(Type.String()),
    Type.Array(Type.String()),
    Type.Null(),
  ], {
    description:
      "Offered options (option to description), narrowing a choice question; an array of option names is accepted too.",
  })),
});

/** The body of `/v1/altdecisions`. */
export const AltDecisionsRequest = Type.Object({
  model,
  state: state(
    "The text to decide on; an object is serialised with JSON.stringify first.",
  ),
  questions: recordOf(ref("AltQuestion", AltQuestion), {
    description: "Keyed by question name.",
  }),
  exposed,
  top,
});

/** One answer of `/v1/altdecisions`. */
export const AltAnswer = Type.Object({
  type: Type.String(),
  choice: Type.Optional(Type.String()),
  confidence,
  probabilities: Type.Optional(recordOf(probability)),
  probability: Type.Optional(yes),
  noul: Type.Optional(yes),
  answer: Type.Optional(Type.Boolean()),
  service: ref("Service", Service),
}, {
  description:
    "A choice answer has choice and probabilities; predicate has probability; noul has probability, noul and answer; an unsupported question has only type, confidence and service.",
  dependentRequired: {
    choice: ["probabilities"],
    noul: ["probability", "answer"],
  },
});

/** The reply of `/v1/altdecisions`. */
export const AltDecisionsResponse = Type.Object({
  model: Type.String(),
  answers: recordOf(ref("AltAnswer", AltAnswer)),
  latency_ms: nonNegative,
  service: ref("ResponseService", ResponseService),
});

/** The body of `/v1/playground`. */
export const PlaygroundRequest = Type.Object({
  question: Type.Optional(nullable(Type.String(), {
    description:
      "A question of the bundle; may be left out when the bundle has exactly one.",
  })),
  text: Type.String(),
});

/** The reply of `/v1/playground`. */
export const PlaygroundResponse = Type.Object({
  question: Type.String(),
  answer: Type.Union([Type.String(), Type.Boolean(), Type.Null()]),
  confidence,
  threshold: nullable(Type.Number(), {
    description: "The certified threshold; null when uncalibrated.",
  }),
  alpha: nullableNumber,
  certified: Type.Boolean(),
  flag: ref("Flag", Flag),
  reason: Type.String({ description: "The verdict in words." }),
  radius,
  top: Type.Array(
    Type.Object({ option: Type.String(), probability }),
    {
      maxItems: 3,
      description: "The three most likely options, best first.",
    },
  ),
});

/** The playground reply. */
export type PlaygroundResponse = Static<typeof PlaygroundResponse>;

/** The health document, `GET /v1/health`. */
export const HealthDocument = Type.Object({
  ok: Type.Literal(true),
  questions: Type.Array(Type.String(), {
    description: "The bundle's question names.",
  }),
  version: Type.String({ description: "This program's version." }),
  interface_version: Type.String({
    description: "The HTTP interface release it implements.",
  }),
  bundle_id: Type.String({
    description:
      "The bundle served: its manifest's checksum (64 hex digits); a rolling reload is done when every replica names the same one.",
  }),
});

/** The health document. */
export type HealthDocument = Static<typeof HealthDocument>;

/** The component schemas of decisions, the playground, health and errors. */
export const DECISION_SCHEMAS = {
  Error: ErrorBody,
  Flag,
  Answer,
  DecideRequest,
  DecideResponse,
  DecideBatchRequest,
  DecideBatchResponse,
  DecisionsQuestion,
  DecisionsRequest,
  Service,
  DecisionsAnswer,
  DecisionsResponse,
  ResponseService,
  AltQuestion,
  AltDecisionsRequest,
  AltAnswer,
  AltDecisionsResponse,
  PlaygroundRequest,
  PlaygroundResponse,
  HealthDocument,
} satisfies Record<string, JsonSchema>;
