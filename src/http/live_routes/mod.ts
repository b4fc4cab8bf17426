/**
 * The routes that feed and reset the live certificate: `POST /v1/feedback`
 * (its body checked by `src/wire/`, the items logged and counted, the
 * reply written) and `POST /v1/live/reset`. What they count with is
 * `src/live/`; the live section of `/v1/stats` and its `/metrics` families
 * are `src/metrics/`.
 *
 * @module
 */

export { answerFeedback } from "./feedback_route.ts";
export { answerLiveReset } from "./reset.ts";
