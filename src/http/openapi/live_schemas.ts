/**
 * JSON Schema of the live certificate's parts: `POST /v1/feedback` and the
 * `live` section of `/v1/stats`.
 *
 * @module
 */

import {
  componentRef as ref,
  count,
  type JsonSchema,
  nullableNumber,
  probability,
} from "./schema_parts.ts";

const MAX_FEEDBACK_ITEMS = 1000;

/** The component schemas of the live certificate. */
export const LIVE_SCHEMAS = {
  FeedbackItem: {
    type: "object",
    required: ["question", "state", "answer"],
    properties: {
      question: { type: "string", description: "A question of the bundle." },
      state: {
        type: ["string", "object"],
        description:
          "The text the answer was about; an object is serialised with JSON.stringify first.",
      },
      answer: {
        type: ["string", "boolean"],
        description:
          "What the reference model answered: an option (choice question) or true / false (yes/no question).",
      },
      audit: {
        type: "string",
        description:
          "The audit id the service gave with the answer, when this answers an audit.",
      },
    },
  },
  FeedbackRequest: {
    oneOf: [
      ref("FeedbackItem"),
      {
        type: "array",
        items: ref("FeedbackItem"),
        minItems: 1,
        maxItems: MAX_FEEDBACK_ITEMS,
      },
    ],
  },
  FeedbackResponse: {
    type: "object",
    required: [
      "received",
      "audits",
      "feedback",
      "traces_only",
      "missed_audits",
    ],
    properties: {
      received: count,
      audits: { ...count, description: "Items counted as audits." },
      feedback: {
        ...count,
        description: "Items counted as feedback on an uncertified answer.",
      },
      traces_only: {
        ...count,
        description:
          "Items kept as traces only (a certified answer, one no threshold could change, a missed audit id, or the live certificate off).",
      },
      missed_audits: {
        type: "array",
        items: {
          type: "object",
          required: ["audit", "reason"],
          properties: {
            audit: { type: "string" },
            reason: {
              enum: ["unknown", "expired", "answered", "other_question"],
            },
          },
        },
        description:
          "Audit ids that were not counted: unknown (never given), expired (dropped unanswered, or answered long ago), answered (answered already: each id counts once) or other_question (given for another question).",
      },
    },
  },
  LiveQuestion: {
    type: "object",
    required: [
      "threshold",
      "reason",
      "bundle_threshold",
      "audited",
      "audit_disagreements",
      "feedback",
      "uncertified_decisions",
      "decisions",
      "labelled",
      "estimate",
      "lower",
      "upper",
      "alpha",
      "confidence",
      "summary",
    ],
    properties: {
      threshold: nullableNumber,
      reason: {
        enum: [
          "bundle",
          "live_lower",
          "live_stricter",
          "withdrawn",
          "uncalibrated",
        ],
      },
      bundle_threshold: nullableNumber,
      audited: count,
      audit_disagreements: count,
      feedback: count,
      uncertified_decisions: count,
      decisions: count,
      labelled: count,
      estimate: nullableNumber,
      lower: nullableNumber,
      upper: nullableNumber,
      alpha: probability,
      confidence: probability,
      summary: { type: "string" },
    },
  },
  LiveStats: {
    type: "object",
    required: [
      "enabled",
      "audit_rate",
      "pending_audits",
      "pending_capacity",
      "audit_ttl_s",
      "audits_dropped",
      "questions",
    ],
    properties: {
      enabled: { type: "boolean" },
      audit_rate: probability,
      pending_audits: count,
      pending_capacity: count,
      audit_ttl_s: { type: "number", minimum: 0 },
      audits_dropped: count,
      questions: { type: "object", additionalProperties: ref("LiveQuestion") },
    },
  },
} satisfies Record<string, JsonSchema>;
