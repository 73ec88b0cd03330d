/**
 * @module lib/auth/oidc/key-set — one issuer's signing keys: found by OIDC discovery
 * (`/.well-known/openid-configuration` → `jwks_uri`) and cached. A `kid` not in the cache
 * triggers one refresh, at most one per `minRefreshMs` (concurrent misses share it), so a token
 * with an invented `kid` cannot make the node fetch keys in a loop. Every fetch is bounded in
 * time and size and follows no redirect; when the issuer cannot be reached, the cached keys keep
 * working and a key not cached is `unavailable` (a retryable refusal).
 */

import { discoveryUrl, issuerUrlProblem } from './issuer-url.ts';
import { importJwk, keyFits, type JwtAlg, type PublicJwk } from './jwt.ts';

/** Bounds of one issuer's key set (docs/limits.md). */
const KEY_SET_LIMITS = Object.freeze({
  /** Keys kept from one JWKS; more are ignored. */
  maxKeys: 32,
  /** The largest discovery document or JWKS read, in bytes. */
  maxDocumentBytes: 256 * 1024,
  /** How long one fetch may take. */
  fetchTimeoutMs: 3000,
  /** The least time between two refreshes for an unknown `kid`. */
  minRefreshMs: 30_000,
});

export interface KeySetOptions {
  fetch?: typeof fetch;
  now?: () => number;
  fetchTimeoutMs?: number;
  minRefreshMs?: number;
}

/** A key for a token, `unknown` (the issuer does not publish it), or `unavailable` (the issuer cannot be reached). */
export type KeyLookup = CryptoKey | 'unknown' | 'unavailable';

export async function readJson(
  url: string,
  o: Required<Pick<KeySetOptions, 'fetch' | 'fetchTimeoutMs'>>,
): Promise<Record<string, unknown>> {
  const res = await o.fetch(url, {
    redirect: 'manual',
    signal: AbortSignal.timeout(o.fetchTimeoutMs),
    headers: { accept: 'application/json' },
  });
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${url} answered ${res.status}`);
  }
  return boundedJson(res, url);
}

/** A response's JSON object, read under the document bound. @throws Error naming `url` */
export async function boundedJson(res: Response, url: string): Promise<Record<string, unknown>> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > KEY_SET_LIMITS.maxDocumentBytes) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${url} is larger than ${KEY_SET_LIMITS.maxDocumentBytes} bytes`);
  }
  const text = await res.text();
  if (text.length > KEY_SET_LIMITS.maxDocumentBytes)
    throw new Error(`${url} is larger than ${KEY_SET_LIMITS.maxDocumentBytes} bytes`);
  const doc: unknown = JSON.parse(text);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`${url} is not a JSON object`);
  return doc as Record<string, unknown>;
}

export class IssuerKeySet {
  private keys = new Map<string, PublicJwk>();
  private imported = new Map<string, CryptoKey>();
  private jwksUri: string | undefined;
  private loaded = false;
  private lastAttempt = -Infinity;
  private lastFailed = false;
  private inflight: Promise<void> | undefined;
  private readonly o: Required<KeySetOptions>;

  constructor(
    readonly issuer: string,
    opts: KeySetOptions = {},
  ) {
    this.o = {
      fetch: opts.fetch ?? fetch,
      now: opts.now ?? Date.now,
      fetchTimeoutMs: opts.fetchTimeoutMs ?? KEY_SET_LIMITS.fetchTimeoutMs,
      minRefreshMs: opts.minRefreshMs ?? KEY_SET_LIMITS.minRefreshMs,
    };
  }

  /** The key that checks a token of `alg` with `kid` (no `kid`: the one key that fits, if only one does). */
  async keyFor(kid: string | undefined, alg: JwtAlg): Promise<KeyLookup> {
    const cached = await this.find(kid, alg);
    if (cached) return cached;
    // At most one refresh per interval, whatever the tokens name: an invented kid cannot loop.
    if (this.o.now() - this.lastAttempt < this.o.minRefreshMs && !this.inflight)
      return this.lastFailed || !this.loaded ? 'unavailable' : 'unknown';
    await this.refresh();
    if (this.lastFailed && !this.loaded) return 'unavailable';
    return (await this.find(kid, alg)) ?? (this.lastFailed ? 'unavailable' : 'unknown');
  }

  /** Why the last refresh failed, for the log (never a token). */
  lastError: string | undefined;

  private async find(kid: string | undefined, alg: JwtAlg): Promise<CryptoKey | undefined> {
    let jwk: PublicJwk | undefined;
    let id = kid;
    if (kid !== undefined) jwk = this.keys.get(kid);
    else {
      const fitting = [...this.keys].filter(([, k]) => keyFits(k, alg));
      if (fitting.length === 1) [id, jwk] = fitting[0]!;
    }
    if (!jwk || !keyFits(jwk, alg)) return undefined;
    const slot = `${id}\u0000${alg}`;
    const have = this.imported.get(slot);
    if (have) return have;
    const key = await importJwk(jwk, alg);
    if (key) this.imported.set(slot, key);
    return key;
  }

  /** One refresh at a time; concurrent callers wait for the same one. */
  private refresh(): Promise<void> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttempt = this.o.now();
    try {
      if (!this.jwksUri) this.jwksUri = await this.discover();
      const doc = await readJson(this.jwksUri, this.o);
      if (!Array.isArray(doc.keys)) throw new Error('the JWKS has no keys list');
      const keys = new Map<string, PublicJwk>();
      for (const k of doc.keys.slice(0, KEY_SET_LIMITS.maxKeys) as unknown[]) {
        if (k === null || typeof k !== 'object') continue;
        const jwk = k as PublicJwk;
        if (typeof jwk.kty !== 'string') continue;
        keys.set(typeof jwk.kid === 'string' ? jwk.kid : `#${keys.size}`, jwk);
      }
      this.keys = keys;
      this.imported.clear();
      this.loaded = true;
      this.lastFailed = false;
      this.lastError = undefined;
    } catch (e) {
      this.lastFailed = true;
      // The next refresh asks discovery again: the issuer may have moved its keys.
      this.jwksUri = undefined;
      this.lastError = (e as Error).message.slice(0, 200);
    }
  }

  /** The issuer's `jwks_uri`; the document must name this very issuer. */
  private async discover(): Promise<string> {
    const doc = await readJson(discoveryUrl(this.issuer), this.o);
    if (doc.issuer !== this.issuer) throw new Error('the discovery document names another issuer');
    const uri = doc.jwks_uri;
    if (typeof uri !== 'string') throw new Error('the discovery document names no jwks_uri');
    const problem = issuerUrlProblem(uri);
    if (problem) throw new Error(`jwks_uri: ${problem}`);
    return uri;
  }
}
