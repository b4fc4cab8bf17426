/**
 * The app's middleware, each one job with an `Options` interface and its
 * defaults, installed outermost first: `countResponses` (every response
 * counted under its route), `gateRequests` (requests in flight, drain),
 * `clientBodies` (bodies arriving at once per client address) and
 * `tokenAuth` (not installed at all without a token).
 *
 * @module
 */

export { clientBodies, type ClientBodiesOptions } from "./client_bodies.ts";
export {
  countResponses,
  type CountResponsesOptions,
} from "./count_responses.ts";
export { gateRequests, type GateRequestsOptions } from "./gate_requests.ts";
export {
  FEEDBACK_UNAUTHORIZED_MESSAGE,
  tokenAuth,
  type TokenAuthOptions,
  UNAUTHORIZED_MESSAGE,
} from "./token_auth.ts";
