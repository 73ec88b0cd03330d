/**
 * @module test/support/hand-issuer — an issuer the tests control byte for byte: a discovery
 * document and a JWKS on a free loopback port, and tokens signed with its ES256 key carrying
 * whatever claims and header a test chooses (an `nbf` ahead, an invented `kid`, another issuer
 * named in discovery). The real provider (test/support/oidc-provider.ts) covers the honest paths.
 */

export interface HandIssuer {
  issuer: string;
  /** A token with these claims (iss, exp and sub default to valid ones) and header fields. */
  sign(claims?: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  /** The public JWK of its key (what an attacker would use as an HMAC secret). */
  publicJwk: JsonWebKey & { kid: string };
  /** How many times its JWKS was fetched. */
  jwksFetches(): number;
  /** What discovery names as the issuer (default: itself). */
  claimIssuer(issuer: string): void;
  stop(): Promise<void>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

export async function startHandIssuer(audience: string): Promise<HandIssuer> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const kid = crypto.randomUUID();
  const publicJwk = { ...(await crypto.subtle.exportKey('jwk', pair.publicKey)), kid };
  let fetches = 0;
  let named: string | undefined;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req): Response {
      const path = new URL(req.url).pathname;
      if (path === '/.well-known/openid-configuration')
        return Response.json({ issuer: named ?? issuer, jwks_uri: `${issuer}/jwks` });
      if (path === '/jwks') {
        fetches++;
        return Response.json({ keys: [{ ...publicJwk, alg: 'ES256', use: 'sig' }] });
      }
      return new Response('not found', { status: 404 });
    },
  });
  const issuer: string = `http://127.0.0.1:${server.port}`;
  return {
    issuer,
    publicJwk,
    async sign(claims = {}, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      const h = b64({ alg: 'ES256', typ: 'at+jwt', kid, ...header });
      const p = b64({
        iss: issuer,
        aud: audience,
        sub: 'hand',
        exp: now + 300,
        iat: now,
        scope: 'a2a.read',
        ...claims,
      });
      const sig = await crypto.subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        pair.privateKey,
        new TextEncoder().encode(`${h}.${p}`),
      );
      return `${h}.${p}.${Buffer.from(sig).toString('base64url')}`;
    },
    jwksFetches: () => fetches,
    claimIssuer: (i) => {
      named = i;
    },
    stop: () => server.stop(true),
  };
}
