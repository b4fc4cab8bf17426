/**
 * JSON Schemas of the bodies the decision routes and the playground read and
 * write, and of the health document and the error body. Field names are the
 * interface's, exactly.
 *
 * The request bodies are described with their routes (`../body_spec.ts`);
 * `schemas.ts` lists their schemas with these. Response schemas list the fields the service
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
} from "../wire/mod.ts";

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

/** The decision id of an uncertified answer. */
const feedback_id = Type.Optional(Type.String({
  description:
    "Present on every uncertified answer while the live certificate runs: the decision's id. Send it back with the reference model's answer to /v1/feedback (as feedback_id, or audit), so that the answer counts once and a feedback log knows how the decision was picked.",
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
  feedback_id,
}, {
  description:
    "One answer of /v1/decide. A choice answer has choice and probabilities, a yes/no answer has answer and probability; an answer to a question the bundle does not have has neither (flag unsupported).",
  dependentRequired: { choice: ["probabilities"], answer: ["probability"] },
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
  reason: Type.Optional(Type.String({
    description:
      "Only when answers is empty: why (the request named no question and a learning service knows none yet, or questions was empty).",
  })),
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

/** The `service` object of a decision-model answer. */
export const Service = Type.Object({
  source: Type.Union([Type.Literal("table"), Type.Literal("semantic")], {
    description:
      "table: the table answered; semantic: the second tier (a sentence encoder) answered, asked because the table was not sure (bundles of format 4 only).",
  }),
  certified: Type.Boolean(),
  flag: ref("Flag", Flag),
  audit,
  feedback_id,
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

/** The reply of `/v1/playground`. */
export const PlaygroundResponse = Type.Object({
  question: Type.String(),
  answer: Type.Union([Type.String(), Type.Boolean(), Type.Null()]),
  confidence,
  threshold: nullable(Type.Number(), {
    description:
      "The threshold in force the answer was certified against (with a second tier served, the two-tier rule's, for both tiers); null when uncalibrated.",
  }),
  alpha: nullableNumber,
  certified: Type.Boolean(),
  flag: ref("Flag", Flag),
  reason: Type.String({
    description:
      "The verdict in words; with a second tier served, it names the tier that answered and the threshold in force beside the table's own.",
  }),
  radius,
  top: Type.Array(
    Type.Object({ option: Type.String(), probability }),
    {
      maxItems: 3,
      description: "The three most likely options, best first.",
    },
  ),
  tier: Type.Optional(Type.Union([
    Type.Literal("table"),
    Type.Literal("semantic"),
  ], {
    description:
      "Which tier answered, as in a /v1/decide answer: present only when the bundle served has a second tier.",
  })),
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

/**
 * The component schemas of decisions' and the playground's replies, health
 * and errors (`schemas.ts` puts the request bodies' among them).
 */
export const DECISION_SCHEMAS = {
  Error: ErrorBody,
  Flag,
  Answer,
  DecideResponse,
  DecideBatchResponse,
  Service,
  DecisionsAnswer,
  DecisionsResponse,
  ResponseService,
  AltAnswer,
  AltDecisionsResponse,
  PlaygroundResponse,
  HealthDocument,
} satisfies Record<string, JsonSchema>;
