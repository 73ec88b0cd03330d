/**
 * @module lib/a2a/webhook-auth — what a webhook config may make a delivery carry: only what the
 * protocol defines, `Authorization: <scheme> <credentials>` with a known scheme and token68
 * credentials, and `X-A2A-Notification-Token`. A caller cannot choose any other header value.
 */

/** The `Authorization` schemes a webhook config may name (HTTP authentication, RFC 9110 §11). */
const SCHEMES: Readonly<Record<string, string>> = { bearer: 'Bearer', basic: 'Basic' };
/** token68 (RFC 9110 §11.2): what Bearer and Basic credentials are made of. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
/** A notification token: visible ASCII without spaces. */
const VISIBLE = /^[\x21-\x7e]+$/;

/**
 * Why a config's `authentication` or `token` is refused, or null. Deliveries carry only what the
 * protocol defines: `Authorization: <scheme> <credentials>` with a known scheme and token68
 * credentials, and `X-A2A-Notification-Token`; a caller cannot make them carry anything else.
 */
export function refuseWebhookAuth(
  auth: { scheme: string; credentials?: string } | undefined,
  token?: string,
): string | null {
  if (token !== undefined && !VISIBLE.test(token))
    return 'token must be visible ASCII characters without spaces';
  if (!auth) return null;
  if (!SCHEMES[auth.scheme.toLowerCase()])
    return `authentication scheme must be one of ${Object.values(SCHEMES).join(', ')}`;
  if (auth.credentials !== undefined && !TOKEN68.test(auth.credentials))
    return 'authentication credentials must be a token68 (letters, digits, -._~+/ and trailing =)';
  return null;
}

/** The scheme as it is sent (`bearer` becomes `Bearer`); the scheme itself when unknown. */
export function canonicalScheme(scheme: string): string {
  return SCHEMES[scheme.toLowerCase()] ?? scheme;
}
