/**
 * @module hub/http/sessions — console sessions. A session has two secrets: one in an HttpOnly,
 * SameSite=Strict cookie whose name carries this hub's name and port, and a page key the console
 * keeps in its own origin's storage and echoes in `X-Lume-Key` on every request. Cookies are not
 * scoped by port, so any other server on this host is sent the cookie; the key it never sees, so
 * a replayed (or planted) cookie alone speaks for nobody. The hub keeps only SHA-256 digests, in a
 * bounded table: at most `maxPerName` sessions per name (a new one replaces that name's oldest,
 * never someone else's), at most `max` in all (past that a sign-in is refused, nobody signed out),
 * each ending after a fixed time, or as soon as the token it was signed in with is revoked (a
 * session made through an issuer: when the access token it was made from expires).
 */

import { hashSecret, newSecret } from '../../lib/auth/secret.ts';

/** The header the console sends its page key in (and `lume_key` in the query of its streams). */
const SESSION_KEY_HEADER = 'x-lume-key';
const SESSION_KEY_PARAM = 'lume_key';

export interface SessionOptions {
  /** How long a session lasts from sign-in, in ms (default 12 h). */
  ttlMs?: number;
  /** Most live sessions in all (default 1 000); past it a sign-in is refused. */
  max?: number;
  /** Most live sessions of one name (default 16); a new one ends that name's oldest. */
  maxPerName?: number;
  now?: () => number;
}

export interface SessionTokens {
  /** Whether the token with this digest still exists under this name (revoked: the session ends). */
  holds(digest: string, name: string): boolean;
}

interface Session {
  name: string;
  /** A session made through an issuer: the scopes (and tenants) of the access token it was made from. */
  scopes: readonly string[] | undefined;
  tenants: readonly string[] | undefined;
  keyHash: string;
  /** The digest of the token it was signed in with (none for a console URL's sign-in). */
  tokenDigest: string | undefined;
  expires: number;
}

export interface NewSession {
  /** Goes into the cookie; the hub keeps its digest only. */
  secret: string;
  /** Goes to the page once, at sign-in; the hub keeps its digest only. */
  key: string;
}

export class SessionTable {
  private readonly byHash = new Map<string, Session>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly maxPerName: number;
  private readonly now: () => number;
  /** The token book revocations are read from (set by the hub's access policy). */
  tokens: SessionTokens | undefined;

  constructor(opts: SessionOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 12 * 3600_000;
    this.max = opts.max ?? 1000;
    this.maxPerName = opts.maxPerName ?? 16;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.byHash.size;
  }

  /** Seconds a new session's cookie lives (its Max-Age). */
  get maxAgeSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /**
   * Starts a session for `name`, or answers undefined when the table is full of other live
   * sessions (nobody is signed out to make room).
   */
  create(
    name: string,
    tokenDigest?: string,
    issued?: { scopes: readonly string[]; tenants?: readonly string[]; expiresAt: number },
  ): NewSession | undefined {
    const now = this.now();
    // Insertion order is age order: the first entries are the oldest.
    const own: string[] = [];
    for (const [hash, s] of this.byHash) {
      if (s.expires <= now) this.byHash.delete(hash);
      else if (s.name === name) own.push(hash);
    }
    while (own.length >= this.maxPerName) this.byHash.delete(own.shift()!);
    if (this.byHash.size >= this.max) return undefined;
    const secret = newSecret('s_');
    const key = newSecret('k_');
    this.byHash.set(hashSecret(secret), {
      name,
      scopes: issued?.scopes,
      tenants: issued?.tenants,
      keyHash: hashSecret(key),
      tokenDigest,
      // A session made through an issuer ends with the access token it was made from.
      expires: Math.min(now + this.ttlMs, issued?.expiresAt ?? Infinity),
    });
    return { secret, key };
  }

  /**
   * The name a live session speaks for, given its cookie secret and its page key. `key`
   * undefined checks the cookie only (the console page itself, which holds nothing).
   */
  lookup(secret: string, key: string | null | undefined): string | undefined {
    return this.find(secret, key)?.name;
  }

  /** The live session a cookie secret and page key name: its name, and its scopes when an issuer's. */
  find(
    secret: string,
    key: string | null | undefined,
  ): { name: string; scopes?: readonly string[]; tenants?: readonly string[] } | undefined {
    if (secret.length === 0 || secret.length > 128) return undefined;
    const hash = hashSecret(secret);
    const s = this.byHash.get(hash);
    if (!s) return undefined;
    if (
      s.expires <= this.now() ||
      (s.tokenDigest !== undefined && this.tokens && !this.tokens.holds(s.tokenDigest, s.name))
    ) {
      this.byHash.delete(hash);
      return undefined;
    }
    if (key !== undefined && (!key || key.length > 128 || hashSecret(key) !== s.keyHash))
      return undefined;
    if (!s.scopes) return { name: s.name };
    return s.tenants
      ? { name: s.name, scopes: s.scopes, tenants: s.tenants }
      : { name: s.name, scopes: s.scopes };
  }

  end(secret: string): void {
    this.byHash.delete(hashSecret(secret));
  }
}

/** The cookie's name on this hub: its name and port, so two hubs on one host never share one. */
export function sessionCookieName(hub: string, port: number): string {
  return `lume_${hub.replace(/[^A-Za-z0-9]/g, '_')}_${port}`;
}

/** A session cookie's value as the hub makes it: anything else under its name is someone else's. */
const SESSION_SECRET = /^s_[A-Za-z0-9_-]{43}$/;
/** The Cookie header read (characters) and the values of our name looked up, at most (docs/limits.md). */
const COOKIE_HEADER_MAX = 65_536;
const COOKIE_VALUES_MAX = 64;

/**
 * Every value under `name` in the request's Cookie header that could be one of ours. Another app on
 * this host may plant cookies of that name (cookies are not scoped by port) or flood the header
 * with others (a cookie bomb): a planted value is skipped and a long header is still read, so
 * neither signs the user out.
 */
export function cookieValues(req: Request, name: string): string[] {
  const header = req.headers.get('cookie')?.slice(0, COOKIE_HEADER_MAX);
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_SECRET.test(value) && out.push(value) >= COOKIE_VALUES_MAX) break;
  }
  return out;
}

/** The page key a request carries: the header, or (for an EventSource, which sends none) the query. */
export function sessionKeyOf(req: Request): string | null {
  const header = req.headers.get(SESSION_KEY_HEADER);
  if (header !== null) return header;
  if (req.method !== 'GET') return null;
  return new URL(req.url).searchParams.get(SESSION_KEY_PARAM);
}

/** The Set-Cookie value of a session: unreadable from scripts, never sent by another site's page. */
export function sessionCookie(
  name: string,
  secret: string,
  maxAgeSeconds: number,
  secure: boolean,
): string {
  return `${name}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(name: string, secure: boolean): string {
  return `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
