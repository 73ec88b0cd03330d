/**
 * @module lib/errors/hub — codes of the hub's HTTP API, its workbench (negotiations, entities) and
 * its fleet view, and the generic codes every node's HTTP surface uses (NOT_FOUND, INTERNAL).
 */

import type { ErrorSpec } from './spec.ts';

export const HUB_ERRORS = {
  BAD_REQUEST: { http: 400, message: 'malformed request' },
  BAD_QUERY: { http: 400, message: 'malformed query' },
  // ARD's code (its Appendix B) for a refused search or listing: hub/fleet/discovery.ts.
  INVALID_ARGUMENT: { http: 400, message: 'malformed query or filter' },
  // lib/net/request-guard.ts: every process, before any route.
  BAD_HOST: { http: 400, message: 'the Host header or request target is malformed' },
  FORBIDDEN_ORIGIN: { http: 403, message: 'this API accepts same-origin requests only' },
  // The hub's browser boundary (hub/http/access.ts).
  FORBIDDEN_HOST: { http: 403, message: 'this hub does not answer to that Host name' },
  FORBIDDEN_CROSS_SITE: { http: 403, message: 'requests from another site are refused' },
  NOT_JSON: { http: 415, message: 'POST bodies must be application/json' },
  // The console's sign-in (hub/http/login.ts).
  SIGN_IN_THROTTLED: { http: 429, message: 'too many sign-in attempts from this address' },
  SESSIONS_FULL: { http: 503, message: 'every console session is in use' },
  // The console's sign-in through an issuer (hub/http/oidc-login.ts): each on the sign-in page.
  OIDC_SIGN_IN_STATE: { http: 400, message: 'the sign-in is unknown, used already or expired' },
  OIDC_SIGN_IN_BROWSER: { http: 403, message: 'the sign-in was started in another browser' },
  OIDC_SIGN_IN_REFUSED: { http: 401, message: 'the issuer did not sign the person in' },
  OIDC_SIGN_IN_CODE: { http: 401, message: 'the code was used already or has expired' },
  OIDC_SIGN_IN_NONCE: { http: 401, message: 'the ID token was issued for another sign-in' },
  OIDC_SIGN_IN_TOKEN: { http: 401, message: "an issuer's token did not verify" },
  OIDC_SIGN_IN_UNAVAILABLE: { http: 503, message: 'the issuer cannot be reached' },
  OIDC_SIGN_IN_FULL: { http: 503, message: 'too many sign-ins are under way' },
  // lib/metrics/endpoint.ts: beyond loopback, /metrics needs the process's access policy.
  METRICS_FORBIDDEN: {
    http: 403,
    message: '/metrics is served beyond loopback only behind an access policy',
  },
  // The console's quick panel sends through a presence the hub holds (hub/mesh/console-presence.ts).
  CONSOLE_MESH_SIGN_IN: { http: 403, message: 'sign in to send from the console' },
  CONSOLE_MESH_FULL: { http: 503, message: 'the hub holds as many console presences as it may' },
  CONSOLE_MESH_UNAVAILABLE: { http: 503, message: 'the console presence cannot join the mesh' },
  UNKNOWN_TARGET: { http: 404, message: 'no fleet node by that name' },
  NOT_FOUND: { http: 404, message: 'No such route' },
  METHOD_NOT_ALLOWED: { http: 405, message: 'unsupported method for this route' },
  TOO_LARGE: { http: 413, message: 'request body too large' },
  // Refused before parsing on every surface that answers registry codes (lib/body.ts MAX_JSON_DEPTH).
  BODY_TOO_DEEP: { http: 400, message: 'JSON nests deeper than 64 levels' },
  // lib/body.ts MAX_JSON_VALUES, counted before parsing where a surface asks for it (the A2A
  // bindings answer it as INVALID_REQUEST).
  BODY_TOO_MANY_VALUES: { http: 400, message: 'JSON holds more than 100,000 values' },
  INTERNAL: { http: 500, message: 'Internal error' },
  // Carried by a task that a node's restart failed (lib/a2a/engine/recovery.ts): the work was lost, not refused.
  TASK_INTERRUPTED: { http: 503, message: 'the node restarted while the task was running' },
  NEGOTIATION_BAD_CUSTOMER: {
    http: 400,
    message: 'customer must be a crm customer id such as c-012',
  },
  // An id the server did not make cannot name a record: answered like a missing one.
  NEGOTIATION_BAD_ID: { http: 404, message: 'not a negotiation id' },
  NEGOTIATION_NOT_FOUND: { http: 404, message: 'no such negotiation' },
  NEGOTIATION_UNREADABLE: { http: 500, message: 'the negotiation record cannot be read' },
  NEGOTIATION_BAD_TURN: { http: 502, message: 'an agent broke the negotiation protocol' },
  ENTITY_BAD_QUERY: { http: 400, message: 'give a USCC, a stock code or a name' },
  ENTITY_SOURCE_FAILED: { http: 502, message: 'a node the resolver reads failed' },
  // Another node's answer is untrusted input: one the hub cannot read is this code, never a crash.
  // task.delegate: who may run a job, and which delegation a continuation names.
  DELEGATE_UNKNOWN_EXECUTOR: { http: 404, message: 'no fleet node by that name runs jobs' },
  DELEGATE_NOT_EXECUTOR: { http: 400, message: 'that fleet node offers no exec.* capabilities' },
  DELEGATE_UNKNOWN_TASK: { http: 404, message: 'no delegated hub task by that id' },
  DELEGATE_TASK_ACTIVE: { http: 409, message: 'the delegated task is still running' },
  NODE_BAD_ANSWER: { http: 502, message: 'a node answered in a shape the hub cannot read' },
  NODE_UNHEALTHY: { http: 502, message: 'the node reports itself unhealthy' },
  NO_CARD: { http: 502, message: 'neither an agent card nor a capability list' },
  NODE_UNREACHABLE: { http: 502, message: 'connection failed' },
  NODE_TIMEOUT: { http: 504, message: 'the node did not answer in time' },
  // `bun run fleet add`: registering a node that runs elsewhere.
  FLEET_ADD_BAD_NAME: {
    http: 400,
    message: 'a node name is lower case letters, digits and dashes, starting with a letter',
  },
  FLEET_ADD_BAD_URL: { http: 400, message: 'the URL must be http(s)://host[:port] with no path' },
  FLEET_ADD_NAME_TAKEN: { http: 409, message: 'a node of the fleet that runs here has that name' },
  FLEET_ADD_CARD_MISMATCH: {
    http: 502,
    message: 'the agent card does not describe that node at that URL',
  },
  FLEET_ADD_NO_KEY: { http: 502, message: 'the node publishes no usable key at /peer/identity' },
  FLEET_ADD_KEY_MISMATCH: {
    http: 502,
    message: 'the node published another key than the one expected',
  },
} as const satisfies Record<string, ErrorSpec>;

/**
 * Failures the fleet's domain capabilities raise (lib/domain/, the crm node). Veto codes and USCC
 * check results are not here: they are decisions inside a successful answer, not failures.
 */
export const DOMAIN_ERRORS = {
  UNKNOWN_CUSTOMER: { http: 400, message: 'crm has no such customer' },
  NO_PROFILE: { http: 400, message: 'the customer has no negotiation profile' },
  BAD_PROFILE: { http: 502, message: "the customer's negotiation profile is malformed" },
  // A model-backed negotiation turn: the agent has no model, or its model broke the protocol.
  NO_MODEL: { http: 400, message: 'this agent has no model configured' },
  MODEL_BAD_TURN: { http: 502, message: "the model's turn breaks the negotiation protocol" },
} as const satisfies Record<string, ErrorSpec>;

export type HubErrorCode = keyof typeof HUB_ERRORS;
