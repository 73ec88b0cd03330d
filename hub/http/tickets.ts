/**
 * @module hub/http/tickets — the console's one-time sign-in URLs, as a local notebook server
 * prints them: `http://127.0.0.1:4100/login?ticket=ct_…`. A ticket is an expiry, a random nonce
 * and an HMAC-SHA256 over both and the hub's name, keyed with `DATA_DIR/keys/console.key` (0600),
 * so the hub at start and `bun run console-url` later make tickets the running hub accepts, and
 * nobody without the keys folder can. The hub remembers the nonces it has redeemed until they
 * expire (a bounded table, kept in `DATA_DIR/hub/console-tickets.json`, 0600), so each ticket signs
 * in once, across restarts too.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, fstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../lib/atomic-file.ts';

const TICKET_FILE = 'console.key';
/** How long a printed console URL can be used (1 h). */
const TICKET_TTL_MS = 3600_000;
/** `ct_<expiry>_<nonce>_<mac>`, and `.<name>` for a ticket that signs in as that token's user. */
const TICKET =
  /^ct_([0-9a-z]{1,12})_([A-Za-z0-9_-]{22})_([A-Za-z0-9_-]{43})(?:\.([a-z][a-z0-9-]{0,31}))?$/;

export type Redeemed = 'ok' | 'malformed' | 'forged' | 'expired' | 'used' | 'full';

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');

/**
 * The ticket key of a data folder, made on first use (32 random bytes, 0600 in the 0700 keys folder).
 * @throws Error when the file exists but is not a key.
 */
export function consoleTicketKey(dataDir: string): Uint8Array {
  const dir = join(dataDir, 'keys');
  const path = join(dir, TICKET_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch {}
  if (text === undefined) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      // `wx`: two processes making it at once keep the first one's key.
      writeFileSync(path, `${b64url(randomBytes(32))}\n`, { mode: 0o600, flag: 'wx' });
    } catch {}
    chmodSync(path, 0o600);
    text = readFileSync(path, 'utf8');
  }
  const key = Buffer.from(text.trim(), 'base64url');
  if (key.length !== 32) throw new Error(`keys: ${TICKET_FILE} is not a 32-byte key`);
  return key;
}

export interface TicketOptions {
  key: Uint8Array;
  /** The hub's name: a ticket for another hub of the same data folder does not sign in here. */
  hub: string;
  ttlMs?: number;
  /** Redeemed nonces remembered at once (default 10 000); past it a ticket is refused, `full`. */
  maxRedeemed?: number;
  now?: () => number;
  /**
   * Where redeemed nonces are kept (JSON, 0600), so a restart does not make a used link sign in
   * again; without it they are kept in memory only.
   */
  file?: string;
}

/** The redeemed nonces of a ticket file still unexpired, at most `max` (an unreadable file is none). */
function readRedeemed(file: string, now: number, max: number): Map<string, number> {
  const out = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return out;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return out;
  for (const [nonce, until] of Object.entries(parsed)) {
    if (out.size >= max) break;
    if (/^[A-Za-z0-9_-]{22}$/.test(nonce) && typeof until === 'number' && until > now)
      out.set(nonce, until);
  }
  return out;
}

export class ConsoleTickets {
  /** Nonce → its ticket's expiry. */
  private readonly redeemed: Map<string, number>;

  constructor(private readonly opts: TicketOptions) {
    this.redeemed = opts.file
      ? readRedeemed(opts.file, (opts.now ?? Date.now)(), opts.maxRedeemed ?? 10_000)
      : new Map();
  }

  /** The MAC covers the hub, the expiry, the nonce and the name the ticket signs in as (if any). */
  private mac(expires: string, nonce: string, as?: string): string {
    const named = as === undefined ? '' : `\nas ${as}`;
    return createHmac('sha256', this.opts.key)
      .update(`lume-console-ticket\n${this.opts.hub}\n${expires}\n${nonce}${named}`)
      .digest('base64url');
  }

  /** A fresh ticket, valid for `ttlMs`; `as`: a token's name it signs in as (else `console`). */
  issue(as?: string): string {
    const now = (this.opts.now ?? Date.now)();
    const expires = (now + (this.opts.ttlMs ?? TICKET_TTL_MS)).toString(36);
    const nonce = b64url(randomBytes(16));
    return `ct_${expires}_${nonce}_${this.mac(expires, nonce, as)}${as === undefined ? '' : `.${as}`}`;
  }

  /** The token name a well-formed ticket signs in as, undefined for `console` (checked by `redeem`). */
  nameOf(ticket: string): string | undefined {
    return ticket.length <= 192 ? TICKET.exec(ticket)?.[4] : undefined;
  }

  /** What `redeem` would answer now, nothing used up (to pick the sign-in throttle's bucket). */
  peek(ticket: string): Redeemed {
    return this.check(ticket, false);
  }

  /** Uses a ticket up: `ok` once, `used` after that. */
  redeem(ticket: string): Redeemed {
    return this.check(ticket, true);
  }

  private check(ticket: string, useUp: boolean): Redeemed {
    const m = ticket.length <= 192 ? TICKET.exec(ticket) : null;
    if (!m) return 'malformed';
    const [, expires, nonce, mac, as] = m as unknown as [string, string, string, string, string?];
    const want = Buffer.from(this.mac(expires, nonce, as));
    if (!timingSafeEqual(want, Buffer.from(mac.padEnd(want.length).slice(0, want.length))))
      return 'forged';
    const now = (this.opts.now ?? Date.now)();
    const until = Number.parseInt(expires, 36);
    if (!(until > now)) return 'expired';
    for (const [n, t] of this.redeemed) if (t <= now) this.redeemed.delete(n);
    if (this.redeemed.has(nonce)) return 'used';
    if (this.redeemed.size >= (this.opts.maxRedeemed ?? 10_000)) return 'full';
    if (!useUp) return 'ok';
    this.redeemed.set(nonce, until);
    if (this.opts.file)
      try {
        writeFileAtomicSync(this.opts.file, JSON.stringify(Object.fromEntries(this.redeemed)));
      } catch {
        // Not written, not redeemed: a link that could sign in again after a restart is refused.
        this.redeemed.delete(nonce);
        return 'full';
      }
    return 'ok';
  }
}

/** The URL a ticket signs in at. */
export const consoleUrl = (origin: string, ticket: string) =>
  `${origin.replace(/\/+$/, '')}/login?ticket=${ticket}`;

/**
 * A fresh console URL for the hub `hub` of a data folder, at `origin` (what `bun run console-url`
 * and `bun run fleet` print).
 * @throws Error when the data folder's ticket key cannot be read or made.
 */
export function newConsoleUrl(dataDir: string, hub: string, origin: string, as?: string): string {
  return consoleUrl(origin, new ConsoleTickets({ key: consoleTicketKey(dataDir), hub }).issue(as));
}

/** The origin a browser on this machine opens a hub at: its public origin, else its address. */
export function browserOrigin(host: string, port: number, publicOrigins: string[] = []): string {
  if (publicOrigins[0]) return new URL(publicOrigins[0]).origin;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/**
 * Whether standard output is a file (the supervisor's `logs/<name>.log`, or `> hub.log`): a live
 * console URL is never written there, since whoever reads the file later would sign in with it.
 */
function stdoutIsFile(): boolean {
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}

/** The start-up line about the console: its URL on a terminal or pipe, how to get one in a file. */
export function consoleLine(url: string): [string, { console?: string }] {
  return stdoutIsFile()
    ? ['console: bun run console-url prints a sign-in link (none is written to a log file)', {}]
    : [`console: ${url} (opens once; bun run console-url prints another)`, { console: url }];
}
