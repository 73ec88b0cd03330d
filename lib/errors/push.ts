/**
 * @module lib/errors/push — why a webhook is refused, and how a delivery to one failed. A caller
 * sees a refused config as the A2A error `INVALID_PARAMS` with its message and field; these codes
 * name the reason in process and in the node's log (lib/a2a/push/delivery.ts, lib/net/post.ts).
 */

import type { ErrorSpec } from './spec.ts';

export const PUSH_ERRORS = {
  // A webhook config's address (lib/a2a/push/delivery.ts `refuse`).
  WEBHOOK_URL_INVALID: { http: 400, message: 'webhook URL is not a valid URL' },
  WEBHOOK_URL_SCHEME: { http: 400, message: 'webhook URL must use http or https' },
  WEBHOOK_URL_CREDENTIALS: {
    http: 400,
    message: 'webhook URL must not carry credentials; use the authentication field',
  },
  // lib/net/outbound-policy.ts: before any lookup (`refuseHost`) and at the connection.
  ADDRESS_REFUSED: {
    http: 400,
    message: 'only public addresses are allowed unless PUSH_ALLOW_HOSTS lists it',
  },
  // What a delivery may carry (lib/a2a/push/webhook-auth.ts).
  WEBHOOK_AUTH_SCHEME: { http: 400, message: 'authentication scheme must be Bearer or Basic' },
  WEBHOOK_AUTH_CREDENTIALS: {
    http: 400,
    message:
      'authentication credentials must be a token68 (letters, digits, -._~+/ and trailing =)',
  },
  WEBHOOK_TOKEN_INVALID: {
    http: 400,
    message: 'token must be visible ASCII characters without spaces',
  },
  // One delivery (lib/net/post.ts): retried, except ADDRESS_REFUSED.
  WEBHOOK_TIMEOUT: { http: 504, message: 'the webhook did not answer in time' },
  WEBHOOK_UNREACHABLE: { http: 502, message: 'the webhook could not be reached' },
  WEBHOOK_REJECTED: { http: 502, message: 'the webhook answered with a status other than 2xx' },
} as const satisfies Record<string, ErrorSpec>;

export type PushErrorCode = keyof typeof PUSH_ERRORS;
