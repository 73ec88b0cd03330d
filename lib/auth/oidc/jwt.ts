/**
 * @module lib/auth/oidc/jwt — one compact JWS (a JWT access token) taken apart and its signature
 * checked with WebCrypto against a public JWK: RS256, PS256, ES256 and EdDSA only. `none` and the
 * HMAC algorithms are never accepted, so a token "signed" with an issuer's public key as an HMAC
 * secret, or not signed at all, cannot pass. Claims are checked by lib/auth/oidc/claims.ts.
 */

/** The largest token read (bytes of the compact form); a larger one is refused before decoding. */
export const MAX_TOKEN_BYTES = 8192;

/** The algorithms accepted, each with the WebCrypto parameters that check it and the key type it needs. */
const ALGORITHMS = {
  RS256: {
    kty: 'RSA',
    import: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    verify: { name: 'RSASSA-PKCS1-v1_5' },
  },
  PS256: {
    kty: 'RSA',
    import: { name: 'RSA-PSS', hash: 'SHA-256' },
    verify: { name: 'RSA-PSS', saltLength: 32 },
  },
  ES256: {
    kty: 'EC',
    import: { name: 'ECDSA', namedCurve: 'P-256' },
    verify: { name: 'ECDSA', hash: 'SHA-256' },
  },
  EdDSA: { kty: 'OKP', import: { name: 'Ed25519' }, verify: { name: 'Ed25519' } },
} as const;

export type JwtAlg = keyof typeof ALGORITHMS;
const JWT_ALGS: readonly JwtAlg[] = Object.keys(ALGORITHMS) as JwtAlg[];

/** A token taken apart, its signature not yet checked. */
export interface ParsedJwt {
  alg: JwtAlg;
  kid?: string;
  claims: Record<string, unknown>;
  /** The bytes the signature covers (`header.payload`). */
  signed: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
}

/** Why a token is not a JWT this kit reads (the code names the refusal; docs/errors.md). */
export type JwtProblem = { code: 'TOKEN_MALFORMED' | 'TOKEN_ALG_REFUSED'; message: string };

const SEGMENT = /^[A-Za-z0-9_-]+$/;

function jsonSegment(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a bearer value looks like a compact JWS (three base64url segments), so it is not a kit token. */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => p.length > 0 && SEGMENT.test(p));
}

/** Takes a compact JWS apart; refuses `none`, HMAC and any algorithm not in the list. */
export function parseJwt(token: string): ParsedJwt | JwtProblem {
  const malformed = (message: string): JwtProblem => ({ code: 'TOKEN_MALFORMED', message });
  if (token.length > MAX_TOKEN_BYTES)
    return malformed(`the token is longer than ${MAX_TOKEN_BYTES} bytes`);
  if (!looksLikeJwt(token)) return malformed('the token is not a compact JWS');
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = jsonSegment(h);
  const claims = jsonSegment(p);
  if (!header || !claims) return malformed('the token header or payload is not a JSON object');
  const alg = header.alg;
  if (typeof alg !== 'string' || !Object.hasOwn(ALGORITHMS, alg))
    return {
      code: 'TOKEN_ALG_REFUSED',
      message: `alg ${JSON.stringify(String(alg).slice(0, 16))} is not accepted (${JWT_ALGS.join(', ')})`,
    };
  // A JWS with `crit` names extensions this reader would have to understand; it understands none.
  if (header.crit !== undefined) return malformed('the token names critical header extensions');
  const kid = header.kid;
  if (kid !== undefined && (typeof kid !== 'string' || kid.length > 256))
    return malformed('the token kid is not a short text');
  return {
    alg: alg as JwtAlg,
    ...(typeof kid === 'string' ? { kid } : {}),
    claims,
    signed: new TextEncoder().encode(`${h}.${p}`),
    signature: new Uint8Array(Buffer.from(s, 'base64url')),
  };
}

/** A public JWK's fields this reader uses. */
export interface PublicJwk {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  crv?: string;
  n?: string;
  e?: string;
  x?: string;
  y?: string;
}

/** Whether a JWK can check tokens of `alg`: its type fits, and its own `alg`/`use`, when given, agree. */
export function keyFits(jwk: PublicJwk, alg: JwtAlg): boolean {
  const a = ALGORITHMS[alg];
  if (jwk.kty !== a.kty) return false;
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (alg === 'ES256') return jwk.crv === 'P-256';
  if (alg === 'EdDSA') return jwk.crv === 'Ed25519';
  return true;
}

/** The public part of a JWK only (never a private member), imported for one algorithm. */
export async function importJwk(jwk: PublicJwk, alg: JwtAlg): Promise<CryptoKey | undefined> {
  const pub =
    jwk.kty === 'RSA'
      ? { kty: 'RSA', n: jwk.n, e: jwk.e }
      : jwk.kty === 'EC'
        ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y }
        : { kty: 'OKP', crv: jwk.crv, x: jwk.x };
  try {
    return await crypto.subtle.importKey('jwk', pub as JsonWebKey, ALGORITHMS[alg].import, false, [
      'verify',
    ]);
  } catch {
    return undefined;
  }
}

/** Whether the token's signature verifies with `key` (imported for the token's own algorithm). */
export async function signatureHolds(jwt: ParsedJwt, key: CryptoKey): Promise<boolean> {
  try {
    return await crypto.subtle.verify(ALGORITHMS[jwt.alg].verify, key, jwt.signature, jwt.signed);
  } catch {
    return false;
  }
}
