/**
 * @module lib/auth/oidc/issuer-url — which issuer URLs are trusted at all: `https:`, or `http:` on a
 * loopback address only (a provider a test starts on this machine). The same rule holds for the
 * `jwks_uri` a discovery document names, so an issuer cannot send the node to a plain-HTTP host.
 */

/** True for addresses only this machine can reach. */
function isLoopbackName(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Why a URL may not be an issuer's or its keys' address, or undefined when it may. */
export function issuerUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${JSON.stringify(url.slice(0, 80))} is not a URL`;
  }
  if (u.username || u.password) return 'an issuer URL carries no credentials';
  if (u.search || u.hash) return 'an issuer URL has no query or fragment';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && isLoopbackName(u.hostname)) return undefined;
  return `an issuer is reached over https (http only on a loopback address), not ${u.protocol}//${u.hostname}`;
}

/** The discovery document's address: the issuer, its trailing slash dropped, then the well-known path. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}
