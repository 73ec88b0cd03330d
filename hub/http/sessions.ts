/**
 * @module hub/http/sessions — console sessions: a random secret in an HttpOnly, SameSite=Strict cookie,
 * kept by the hub only as its SHA-256 in a bounded table, each session ending after a fixed time.
 * A session speaks for the token name it was signed in with (or `console` on loopback without login).
 */

import { hashSecret, newSecret } from '../../lib/auth/secret.ts';

export const SESSION_COOKIE = 'lume_session';

export interface SessionOptions {
  /** How long a session lasts from sign-in, in ms (default 12 h). */
  ttlMs?: number;
  /** Most live sessions; the oldest is dropped to make room (default 1 000). */
  max?: number;
  now?: () => number;
}

interface Session {
  name: string;
  expires: number;
}

export class SessionTable {
  private readonly byHash = new Map<string, Session>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(opts: SessionOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 12 * 3600_000;
    this.max = opts.max ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.byHash.size;
  }

  /** Seconds a new session's cookie lives (its Max-Age). */
  get maxAgeSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /** Starts a session for `name`; the returned secret goes into the cookie and is not kept. */
  create(name: string): string {
    const secret = newSecret('s_');
    // Insertion order is age order: the first entry is the oldest.
    while (this.byHash.size >= this.max) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(hashSecret(secret), { name, expires: this.now() + this.ttlMs });
    return secret;
  }

  /** The name a live session speaks for; an expired one is forgotten. */
  lookup(secret: string): string | undefined {
    if (secret.length === 0 || secret.length > 128) return undefined;
    const hash = hashSecret(secret);
    const s = this.byHash.get(hash);
    if (!s) return undefined;
    if (s.expires <= this.now()) {
      this.byHash.delete(hash);
      return undefined;
    }
    return s.name;
  }

  end(secret: string): void {
    this.byHash.delete(hashSecret(secret));
  }
}

/** The session secret a request's Cookie header carries, if any. */
export function sessionCookieOf(req: Request): string | undefined {
  const header = req.headers.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value of a session: unreadable from scripts, never sent by another site's page. */
export function sessionCookie(secret: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
