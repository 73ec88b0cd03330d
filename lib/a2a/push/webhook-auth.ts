/**
 * @module lib/a2a/push/webhook-auth — what a webhook config may make a delivery carry: only what the
 * protocol defines, `Authorization: <scheme> <credentials>` with a known scheme and token68
 * credentials, and `X-A2A-Notification-Token`. A caller cannot choose any other header value.
 */

import type { Failure } from '../../errors/result.ts';

/** The `Authorization` schemes a webhook config may name (HTTP authentication, RFC 9110 §11). */
const SCHEMES: Readonly<Record<string, string>> = { bearer: 'Bearer', basic: 'Basic' };
/** token68 (RFC 9110 §11.2): what Bearer and Basic credentials are made of. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
/** A notification token: visible ASCII without spaces. */
const VISIBLE = /^[\x21-\x7e]+$/;

/** Why a config's `authentication` or `token` is refused; `field` is `token` or `authentication`. */
export type WebhookAuthFailure = Failure<
  'WEBHOOK_TOKEN_INVALID' | 'WEBHOOK_AUTH_SCHEME' | 'WEBHOOK_AUTH_CREDENTIALS'
> & { field: 'token' | 'authentication' };

/**
 * Why a config's `authentication` or `token` is refused, or undefined. Deliveries carry only what
 * the protocol defines: `Authorization: <scheme> <credentials>` with a known scheme and token68
 * credentials, and `X-A2A-Notification-Token`; a caller cannot make them carry anything else.
 */
export function refuseWebhookAuth(
  auth: { scheme: string; credentials?: string } | undefined,
  token?: string,
): WebhookAuthFailure | undefined {
  if (token !== undefined && !VISIBLE.test(token))
    return {
      code: 'WEBHOOK_TOKEN_INVALID',
      message: 'token must be visible ASCII characters without spaces',
      field: 'token',
    };
  if (!auth) return undefined;
  if (!SCHEMES[auth.scheme.toLowerCase()])
    return {
      code: 'WEBHOOK_AUTH_SCHEME',
      message: `authentication scheme must be one of ${Object.values(SCHEMES).join(', ')}`,
      field: 'authentication',
    };
  if (auth.credentials !== undefined && !TOKEN68.test(auth.credentials))
    return {
      code: 'WEBHOOK_AUTH_CREDENTIALS',
      message:
        'authentication credentials must be a token68 (letters, digits, -._~+/ and trailing =)',
      field: 'authentication',
    };
  return undefined;
}

/** The scheme as it is sent (`bearer` becomes `Bearer`); the scheme itself when unknown. */
export function canonicalScheme(scheme: string): string {
  return SCHEMES[scheme.toLowerCase()] ?? scheme;
}
