/**
 * JSON Schema of the statistics document, `GET /v1/stats` (the interface
 * leaves its fields open; these are the ones the service sends).
 *
 * @module
 */

import {
  componentRef as ref,
  confidence,
  count,
  type JsonSchema,
  nonNegative,
  nullableNumber,
} from "./schema_parts.ts";

/** The component schemas of the statistics document. */
export const STATS_SCHEMAS = {
  LatencySummary: {
    type: "object",
    required: ["count", "p50", "p90", "p99", "max"],
    properties: {
      count,
      p50: nullableNumber,
      p90: nullableNumber,
      p99: nullableNumber,
      max: nullableNumber,
    },
    description: "Microseconds; null before any request.",
  },
  StatsDocument: {
    type: "object",
    required: [
      "started_at",
      "uptime_s",
      "bundle",
      "keep_text",
      "counts",
      "share_answered",
      "per_question",
      "deferral_reasons",
      "latency_us",
      "latency_us_recent",
      "rate",
      "savings",
      "drift",
      "recent",
    ],
    properties: {
      started_at: { type: "string", format: "date-time" },
      uptime_s: nonNegative,
      bundle: {
        type: "object",
        required: ["path", "load_ms", "questions"],
        properties: {
          path: { type: "string" },
          load_ms: nullableNumber,
          questions: {
            type: "array",
            items: {
              type: "object",
              required: ["name", "kind", "options", "threshold", "alpha"],
              properties: {
                name: { type: "string" },
                kind: { enum: ["choice", "yes_no"] },
                options: { type: "array", items: { type: "string" } },
                threshold: nullableNumber,
                alpha: nullableNumber,
              },
            },
          },
        },
      },
      keep_text: { type: "boolean" },
      counts: {
        type: "object",
        required: [
          "requests",
          "answers",
          "certified",
          "deferred",
          "errors",
          "playground",
        ],
        properties: {
          requests: count,
          answers: count,
          certified: count,
          deferred: count,
          errors: count,
          playground: count,
        },
      },
      share_answered: nullableNumber,
      per_question: {
        type: "object",
        additionalProperties: {
          type: "object",
          required: ["answers", "certified", "share_answered", "flags"],
          properties: {
            answers: count,
            certified: count,
            share_answered: nullableNumber,
            flags: { type: "object", additionalProperties: count },
          },
        },
      },
      deferral_reasons: { type: "object", additionalProperties: count },
      latency_us: ref("LatencySummary"),
      latency_us_recent: ref("LatencySummary"),
      rate: {
        type: "object",
        required: ["requests_per_s"],
        properties: { requests_per_s: nonNegative },
      },
      savings: {
        type: "object",
        required: [
          "llm_latency_ms",
          "cost_per_call",
          "calls_saved",
          "time_saved_s",
          "money_saved",
        ],
        properties: {
          llm_latency_ms: nullableNumber,
          cost_per_call: nullableNumber,
          calls_saved: count,
          time_saved_s: nullableNumber,
          money_saved: nullableNumber,
        },
      },
      drift: {
        type: "object",
        additionalProperties: {
          type: "object",
          required: [
            "status",
            "observed",
            "alarmed_at",
            "evidence",
            "alarm_level",
            "alarms",
            "clears",
            "since",
          ],
          properties: {
            status: { enum: ["quiet", "alarmed"] },
            observed: count,
            alarmed_at: { type: ["integer", "null"] },
            evidence: nonNegative,
            alarm_level: nonNegative,
            alarms: count,
            clears: count,
            since: { type: ["string", "null"] },
          },
        },
      },
      live: ref("LiveStats"),
      recent: {
        type: "array",
        items: {
          type: "object",
          required: [
            "at",
            "route",
            "question",
            "answer",
            "confidence",
            "certified",
            "flag",
            "radius",
          ],
          properties: {
            at: { type: "string", format: "date-time" },
            route: { type: "string" },
            question: { type: "string" },
            answer: { type: ["string", "boolean", "null"] },
            confidence,
            certified: { type: "boolean" },
            flag: ref("Flag"),
            radius: { type: ["integer", "null"], minimum: 0 },
            text: {
              type: "string",
              description: "Only when the server runs with --keep-text.",
            },
          },
        },
      },
    },
  },
} satisfies Record<string, JsonSchema>;
