/**
 * @module lib/auth/tokens — bearer tokens for clients outside the fleet: `DATA_DIR/keys/tokens.json`
 * (0600) holds each token's name, creation time, SHA-256 (never the token) and the tenants it may
 * use when it names any (lib/node/tenants.ts). `addToken` makes one and returns it once; a `TokenBook` answers which name a presented token belongs to and picks up
 * `add`/`revoke` from other processes without a restart.
 */

import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../atomic-file.ts';
import { PRINCIPAL_NAME } from './principal.ts';
import { hashSecret, newSecret } from './secret.ts';

const TOKENS_FILE = 'tokens.json';
const FORMAT = 'lume-a2a.tokens/1';

interface TokenEntry {
  hash: string;
  created: string;
  /** The only tenants the token may use; absent: every tenant. */
  tenants?: string[];
}

/** A tenant's name as a token names it (the same grammar as the `tenants` setting). */
const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** At most this many tenants per token. */
const MAX_TOKEN_TENANTS = 64;

/** A token's tenants as written, or why they are refused. */
function tenantsOf(v: unknown): string[] | undefined | null {
  if (v === undefined) return undefined;
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    v.length > MAX_TOKEN_TENANTS ||
    !v.every((t) => typeof t === 'string' && TENANT_NAME.test(t))
  )
    return null;
  return [...new Set(v as string[])];
}

interface TokenFile {
  format: typeof FORMAT;
  tokens: Record<string, TokenEntry>;
}

export const tokensPath = (dataDir: string) => join(dataDir, 'keys', TOKENS_FILE);

/**
 * Names no token in the file may have: `console` is whoever signs in through a console URL the
 * hub prints, `mesh` is MESH_TOKEN. A token of that name would read their tasks.
 */
const RESERVED_TOKEN_NAMES: ReadonlySet<string> = new Set(['console', 'mesh']);

/** The file's tokens; an absent file holds none. @throws Error when the file is malformed. */
function readTokens(path: string): TokenFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { format: FORMAT, tokens: {} };
    throw e;
  }
  const doc = JSON.parse(text) as Partial<TokenFile>;
  if (doc?.format !== FORMAT || !doc.tokens || typeof doc.tokens !== 'object')
    throw new Error(`tokens: ${TOKENS_FILE} is not a token file`);
  const tokens: Record<string, TokenEntry> = {};
  for (const [name, e] of Object.entries(doc.tokens)) {
    const tenants = tenantsOf(e?.tenants);
    if (
      !PRINCIPAL_NAME.test(name) ||
      typeof e?.hash !== 'string' ||
      !/^[0-9a-f]{64}$/.test(e.hash) ||
      tenants === null
    )
      throw new Error(`tokens: entry ${JSON.stringify(name.slice(0, 40))} is malformed`);
    tokens[name] = {
      hash: e.hash,
      created: String(e.created ?? ''),
      ...(tenants ? { tenants } : {}),
    };
  }
  return { format: FORMAT, tokens };
}

function writeTokens(dataDir: string, file: TokenFile): void {
  mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(tokensPath(dataDir), `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Makes a token for `name` and stores its hash (and `tenants`, the only tenants it may use, when
 * given). The token is returned here and nowhere else.
 * @throws Error when the name or a tenant is malformed, or the name already has a token (revoke it first).
 */
export function addToken(
  dataDir: string,
  name: string,
  now = () => new Date(),
  tenants?: readonly string[],
): string {
  const named = tenantsOf(tenants);
  if (named === null)
    throw new Error(
      `tokens: tenants are 1 to ${MAX_TOKEN_TENANTS} names of lower-case letters, digits and dashes`,
    );
  if (!PRINCIPAL_NAME.test(name))
    throw new Error(
      'tokens: a name is lower-case letters, digits and dashes, starting with a letter (at most 32)',
    );
  if (RESERVED_TOKEN_NAMES.has(name))
    throw new Error(
      `tokens: ${name} is reserved (${name === 'mesh' ? 'MESH_TOKEN is the token mesh' : 'the console URL the hub prints signs in as console'}); pick another name`,
    );
  const file = readTokens(tokensPath(dataDir));
  if (Object.hasOwn(file.tokens, name))
    throw new Error(`tokens: ${name} already has a token; revoke it first`);
  const token = newSecret();
  file.tokens[name] = {
    hash: hashSecret(token),
    created: now().toISOString(),
    ...(named ? { tenants: named } : {}),
  };
  writeTokens(dataDir, file);
  return token;
}

/** Removes a name's token. @returns false when it had none. */
export function revokeToken(dataDir: string, name: string): boolean {
  const file = readTokens(tokensPath(dataDir));
  if (!Object.hasOwn(file.tokens, name)) return false;
  delete file.tokens[name];
  writeTokens(dataDir, file);
  return true;
}

/** Names, creation times and tenants, never hashes. */
export function listTokens(
  dataDir: string,
): { name: string; created: string; tenants?: string[] }[] {
  return Object.entries(readTokens(tokensPath(dataDir)).tokens).map(([name, e]) => ({
    name,
    created: e.created,
    ...(e.tenants ? { tenants: e.tenants } : {}),
  }));
}

export interface TokenBookOptions {
  /** How often the file's modification time is checked, in ms (default 1000). */
  recheckMs?: number;
  now?: () => number;
  /** Tokens given in configuration rather than the file (e.g. MESH_TOKEN as `mesh`). */
  extra?: Record<string, string>;
  /** Told once per change of the file that it does not read (the process's log; lib/log.ts `Log` fits). */
  log?: (level: 'warn', msg: string, fields: Record<string, string>) => void;
}

/** Answers which name a presented bearer token belongs to. */
export class TokenBook {
  /** SHA-256 of each token in the file -> its name. */
  private byHash = new Map<string, string>();
  /** Each file token's name -> the tenants it names (only tokens that name some). */
  private tenantsByName = new Map<string, readonly string[]>();
  private stamp = '';
  /** The stamp of a file that did not read, logged once until it changes again. */
  private brokenStamp = '';
  private checkedAt = -Infinity;
  /** SHA-256 of each configured token -> its name. */
  private readonly extra: Map<string, string>;

  constructor(
    private readonly path: string | undefined,
    private readonly opts: TokenBookOptions = {},
  ) {
    this.extra = new Map(
      Object.entries(opts.extra ?? {}).map(([name, token]) => [hashSecret(token), name]),
    );
    this.reload();
  }

  /** The book of `DATA_DIR/keys/tokens.json`. @throws Error when the file is malformed. */
  static open(dataDir: string, opts: TokenBookOptions = {}): TokenBook {
    return new TokenBook(tokensPath(dataDir), opts);
  }

  /** A book with no file: only configured tokens (tests, a hub without a data folder). */
  static of(tokens: Record<string, string>): TokenBook {
    return new TokenBook(undefined, { extra: tokens });
  }

  /** The same book with more configured tokens (the hub adds MESH_TOKEN as `mesh`). */
  including(extra: Record<string, string>): TokenBook {
    return new TokenBook(this.path, { ...this.opts, extra: { ...this.opts.extra, ...extra } });
  }

  /** Whether any token exists (a node with none can only be called by fleet nodes and anonymously). */
  get size(): number {
    this.refresh();
    return this.byHash.size + this.extra.size;
  }

  /** The name a token belongs to, or undefined. Only its SHA-256 is looked up and compared. */
  verify(token: string): string | undefined {
    if (token.length === 0 || token.length > 256) return undefined;
    this.refresh();
    const hash = hashSecret(token);
    // Looked up by hash, so the time taken depends on the digest, never on the token's characters.
    return this.byHash.get(hash) ?? this.extra.get(hash);
  }

  /** The tenants `name`'s token may use, or undefined when it names none (every tenant). */
  tenantsOf(name: string): readonly string[] | undefined {
    return this.tenantsByName.get(name);
  }

  /** The SHA-256 of `name`'s token in the file, or undefined when it has none (a console URL for it). */
  digestOf(name: string): string | undefined {
    this.refresh();
    for (const [hash, n] of this.byHash) if (n === name) return hash;
    return undefined;
  }

  /** Whether the token with this SHA-256 still belongs to `name` (a session ends when it does not). */
  holds(digest: string, name: string): boolean {
    this.refresh();
    return (this.byHash.get(digest) ?? this.extra.get(digest)) === name;
  }

  private refresh(): void {
    const now = (this.opts.now ?? Date.now)();
    if (now - this.checkedAt < (this.opts.recheckMs ?? 1000)) return;
    this.checkedAt = now;
    this.reload();
  }

  /** Re-reads the file when its size or modification time changed; a broken file keeps the last good book. */
  private reload(): void {
    if (!this.path) return;
    let stamp = 'absent';
    try {
      const st = statSync(this.path);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {}
    if (stamp === this.stamp) return;
    try {
      const file = readTokens(this.path);
      // A reserved name written into the file by hand is not a token (it would read their tasks).
      const kept = Object.entries(file.tokens).filter(([name]) => !RESERVED_TOKEN_NAMES.has(name));
      this.byHash = new Map(kept.map(([name, e]) => [e.hash, name]));
      this.tenantsByName = new Map(
        kept.flatMap(([name, e]) => (e.tenants ? [[name, e.tenants] as const] : [])),
      );
      this.stamp = stamp;
    } catch (e) {
      // Keep serving with the last good book, and say so once: a token added to a broken file
      // would otherwise be refused with nothing in the log to tell why.
      if (stamp !== this.brokenStamp)
        this.opts.log?.('warn', 'token file is malformed; keeping the tokens read before', {
          file: this.path,
          error: (e as Error).message.slice(0, 200),
        });
      this.brokenStamp = stamp;
    }
  }
}
