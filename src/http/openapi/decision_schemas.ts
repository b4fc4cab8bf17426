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
 * @module
 */

import {
  componentRef as ref,
  confidence,
  count,
  FLAGS,
  type JsonSchema,
  nonNegative,
  nullableNumber,
  probability,
} from "./schema_parts.ts";

const text = (description: string): JsonSchema => ({
  type: ["string", "object"],
  description,
});
const exposed: JsonSchema = {
  type: ["boolean", "null"],
  description:
    "Treat the input as adversarial: answers that a few inserted words could flip are not certified (flag low_radius). Default false.",
};
const model: JsonSchema = {
  type: ["string", "null"],
  description: 'Echoed in the response; any value works. Default "table".',
};
const questionType: JsonSchema = {
  type: "string",
  description:
    "choice, predicate or noul. A type that does not fit the bundle question (score included) is answered with flag unsupported.",
  examples: ["choice", "predicate", "noul"],
};
const instructions: JsonSchema = {
  type: ["string", "null"],
  description: "Accepted and ignored: the table answers from its traces.",
};

/** The audit id of an answer picked for audit. */
const audit: JsonSchema = {
  type: "string",
  description:
    "Present only when this certified answer was picked for audit: ask the reference model and send its answer to /v1/feedback with this id.",
};

/** The component schemas of decisions, the playground, health and errors. */
export const DECISION_SCHEMAS = {
  Error: {
    type: "object",
    description:
      "Every error body: one field, a message saying what was wrong.",
    required: ["error"],
    properties: { error: { type: "string" } },
    additionalProperties: false,
  },
  Flag: {
    type: ["string", "null"],
    enum: [...FLAGS, null],
    description:
      "Why the answer is not certified; null when it is. Only the first rule that failed is named.",
  },
  Answer: {
    type: "object",
    description:
      "One answer of /v1/decide. A choice answer has choice and probabilities, a yes/no answer has answer and probability; an answer to a question the bundle does not have has neither (flag unsupported).",
    required: ["confidence", "certified", "flag", "radius"],
    properties: {
      choice: { type: "string", description: "The table's best option." },
      answer: { type: "boolean", description: "The yes/no answer." },
      confidence,
      certified: {
        type: "boolean",
        description: "true: serve it; false: ask the language model.",
      },
      flag: ref("Flag"),
      radius: {
        type: ["integer", "null"],
        minimum: 0,
        description:
          "Inserted words needed to flip the answer (a lower bound); null when none can.",
      },
      probabilities: {
        type: "object",
        additionalProperties: probability,
        description:
          "Probability of every option; only the offered options when narrowed (they sum to 1).",
      },
      probability: { ...probability, description: "Probability of yes." },
      audit,
    },
    dependentRequired: { choice: ["probabilities"], answer: ["probability"] },
  },
  DecideRequest: {
    type: "object",
    required: ["state"],
    properties: {
      state: text(
        "The text to decide on; an object is serialised with JSON.stringify first.",
      ),
      questions: {
        type: ["object", "null"],
        description:
          "Answer only these questions (absent: all of the bundle's). An entry's criteria narrows a choice question to those options.",
        additionalProperties: {
          type: ["object", "null"],
          properties: {
            criteria: {
              type: ["array", "null"],
              items: { type: "string" },
              description: "Offered options; empty or absent: all learned.",
            },
          },
        },
      },
      exposed,
    },
  },
  DecideResponse: {
    type: "object",
    required: ["answers", "latency_us"],
    properties: {
      answers: {
        type: "object",
        additionalProperties: ref("Answer"),
        description: "One answer per question asked, keyed by question name.",
      },
      latency_us: {
        ...nonNegative,
        description:
          "Microseconds from the body received to the answers ready.",
      },
    },
  },
  DecisionsQuestion: {
    type: "object",
    required: ["type", "name"],
    properties: {
      type: questionType,
      name: { type: "string", description: "A question of the bundle." },
      instructions,
      choices: {
        type: ["array", "null"],
        description:
          "Offered options, narrowing a choice question; empty or absent: all learned. Plain strings are accepted too.",
        items: {
          anyOf: [
            {
              type: "object",
              required: ["value"],
              properties: { value: { type: "string" } },
            },
            { type: "string" },
          ],
        },
      },
    },
  },
  DecisionsRequest: {
    type: "object",
    required: ["input", "questions"],
    properties: {
      model,
      input: { type: "string", description: "The text to decide on." },
      questions: { type: "array", items: ref("DecisionsQuestion") },
      exposed,
    },
  },
  Service: {
    type: "object",
    required: ["source", "certified", "flag"],
    properties: {
      source: { const: "table" },
      certified: { type: "boolean" },
      flag: ref("Flag"),
      audit,
    },
  },
  DecisionsAnswer: {
    type: "object",
    description:
      "A choice answer has choice and probabilities; predicate has probability; noul has probability, noul and answer; an unsupported question has only type, name, confidence and service.",
    required: ["type", "name", "confidence", "service"],
    properties: {
      type: { type: "string" },
      name: { type: "string" },
      choice: { type: "string" },
      confidence,
      probabilities: {
        type: "array",
        items: {
          type: "object",
          required: ["value", "probability"],
          properties: { value: { type: "string" }, probability },
        },
      },
      probability: { ...probability, description: "Probability of yes." },
      noul: { ...probability, description: "Probability of yes." },
      answer: { type: "boolean" },
      service: ref("Service"),
    },
    dependentRequired: {
      choice: ["probabilities"],
      noul: ["probability", "answer"],
    },
  },
  DecisionsResponse: {
    type: "object",
    required: ["object", "model", "answers", "usage", "service"],
    properties: {
      object: { const: "decision" },
      model: { type: "string" },
      answers: {
        type: "array",
        items: ref("DecisionsAnswer"),
        description: "In question order.",
      },
      usage: {
        type: "object",
        required: ["input_tokens", "output_tokens", "total_tokens"],
        properties: {
          input_tokens: count,
          output_tokens: count,
          total_tokens: count,
        },
        description: "All zero for table answers.",
      },
      service: ref("ResponseService"),
    },
  },
  ResponseService: {
    type: "object",
    required: ["latency_us", "source"],
    properties: { latency_us: nonNegative, source: { const: "table" } },
  },
  AltQuestion: {
    type: "object",
    required: ["type"],
    properties: {
      type: questionType,
      instructions,
      criteria: {
        description:
          "Offered options (option to description), narrowing a choice question; an array of option names is accepted too.",
        anyOf: [
          { type: "object", additionalProperties: { type: "string" } },
          { type: "array", items: { type: "string" } },
          { type: "null" },
        ],
      },
    },
  },
  AltDecisionsRequest: {
    type: "object",
    required: ["state", "questions"],
    properties: {
      model,
      state: text(
        "The text to decide on; an object is serialised with JSON.stringify first.",
      ),
      questions: {
        type: "object",
        additionalProperties: ref("AltQuestion"),
        description: "Keyed by question name.",
      },
      exposed,
    },
  },
  AltAnswer: {
    type: "object",
    description:
      "A choice answer has choice and probabilities; predicate has probability; noul has probability, noul and answer; an unsupported question has only type, confidence and service.",
    required: ["type", "confidence", "service"],
    properties: {
      type: { type: "string" },
      choice: { type: "string" },
      confidence,
      probabilities: { type: "object", additionalProperties: probability },
      probability: { ...probability, description: "Probability of yes." },
      noul: { ...probability, description: "Probability of yes." },
      answer: { type: "boolean" },
      service: ref("Service"),
    },
    dependentRequired: {
      choice: ["probabilities"],
      noul: ["probability", "answer"],
    },
  },
  AltDecisionsResponse: {
    type: "object",
    required: ["model", "answers", "latency_ms", "service"],
    properties: {
      model: { type: "string" },
      answers: {
        type: "object",
        additionalProperties: ref("AltAnswer"),
      },
      latency_ms: nonNegative,
      service: ref("ResponseService"),
    },
  },
  PlaygroundRequest: {
    type: "object",
    required: ["text"],
    properties: {
      question: {
        type: ["string", "null"],
        description:
          "A question of the bundle; may be left out when the bundle has exactly one.",
      },
      text: { type: "string" },
    },
  },
  PlaygroundResponse: {
    type: "object",
    required: [
      "question",
      "answer",
      "confidence",
      "threshold",
      "alpha",
      "certified",
      "flag",
      "reason",
      "radius",
      "top",
    ],
    properties: {
      question: { type: "string" },
      answer: { type: ["string", "boolean", "null"] },
      confidence,
      threshold: {
        ...nullableNumber,
        description: "The certified threshold; null when uncalibrated.",
      },
      alpha: nullableNumber,
      certified: { type: "boolean" },
      flag: ref("Flag"),
      reason: { type: "string", description: "The verdict in words." },
      radius: { type: ["integer", "null"], minimum: 0 },
      top: {
        type: "array",
        maxItems: 3,
        description: "The three most likely options, best first.",
        items: {
          type: "object",
          required: ["option", "probability"],
          properties: { option: { type: "string" }, probability },
        },
      },
    },
  },
  HealthDocument: {
    type: "object",
    required: ["ok", "questions", "version", "interface_version"],
    properties: {
      ok: { const: true },
      questions: {
        type: "array",
        items: { type: "string" },
        description: "The bundle's question names.",
      },
      version: { type: "string", description: "This program's version." },
      interface_version: {
        type: "string",
        description: "The HTTP interface release it implements.",
      },
    },
  },
} satisfies Record<string, JsonSchema>;
