/**
 * @module lib/fleet/join — a node's side of joining a hub's fleet (`lume-node --join <hub URL>`,
 * `serveNode(node, { join: { hub, token } })`): learn and pin the hub's identity from its
 * `GET /peer/identity`, then present the node's card URL and public key to the hub's
 * `POST /peer/join` with a bearer token, the request signed with the node's own Ed25519 key (the
 * proof that it holds the key it presents). A hub that does not answer is retried with backoff;
 * a coded refusal stops the retries. The pin is kept in `<dataDir>/<node>/hub.json` and the ring.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.ts';
import { readBodyBytes } from '../body.ts';
import { JOIN_ERRORS, type JoinErrorCode } from '../errors/join.ts';
import { fail, ok, type Failure, type Result } from '../errors/result.ts';
import type { Log } from '../log.ts';
import { kidOf, pinnedKeys, trustRemoteKey } from '../peer/keys.ts';
import { NODE_NAME } from '../peer/signature.ts';
import type { PeerSigner } from '../peer/signer.ts';
import type { Fleet, FleetMember } from '../config/fleet-file.ts';

/** The hub's route a join is presented to, and the scope it is signed with. */
export const JOIN_ROUTE = '/peer/join';
export const JOIN_SCOPE = 'fleet.join';
/** Backoff between attempts while the hub does not answer: doubling from `firstMs` to `maxMs`. */
const JOIN_RETRY = Object.freeze({ firstMs: 1000, maxMs: 30_000 });
const MAX_ANSWER = 64 * 1024;

/** What the node pinned of its hub. */
export interface HubPin {
  name: string;
  url: string;
  kid: string;
}

/** What the hub answered a join. */
export interface JoinAnswer {
  hub: string;
  node: string;
  url: string;
  kid: string;
  /** `added` the first time, `unchanged` when the hub already had it so, `updated` for a new URL. */
  status: 'added' | 'unchanged' | 'updated';
}

/** A failure of the join: `retry` when the hub did not answer (the loop tries again). */
export type JoinFailure = Failure & { retry: boolean };

const joinFail = (code: JoinErrorCode, detail?: string, retry = false) => {
  const f = fail(
    code,
    detail ? `${JOIN_ERRORS[code].message}: ${detail}` : JOIN_ERRORS[code].message,
  );
  return { ok: false as const, error: { ...f.error, retry } };
};

/** The hub's base URL, or undefined when it is not http(s)://host[:port]. */
export function hubBase(text: string): string | undefined {
  try {
    const u = new URL(text);
    const plain = (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.search;
    return plain && (u.pathname === '/' || u.pathname === '') ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

async function readJson(res: Response): Promise<unknown> {
  const bytes = await readBodyBytes(res, MAX_ANSWER).catch(() => undefined);
  try {
    return bytes ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
  } catch {
    return undefined;
  }
}

/** A failed fetch in a word: Bun's code (`ConnectionRefused`), else the error's name (`TimeoutError`). */
const why = (e: unknown) => (e as { code?: unknown }).code?.toString() ?? (e as Error).name;

const pinFile = (dataDir: string, node: string) => join(dataDir, node, 'hub.json');

/** The hub this node pinned at an earlier join, if any. */
export function readPin(dataDir: string, node: string): HubPin | undefined {
  try {
    const p = JSON.parse(readFileSync(pinFile(dataDir, node), 'utf8')) as Partial<HubPin>;
    return typeof p.name === 'string' && NODE_NAME.test(p.name) && typeof p.url === 'string'
      ? { name: p.name, url: p.url, kid: String(p.kid ?? '') }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the hub's identity and pins it: its key goes into this node's ring, unless the ring
 * already pins another key for that hub (JOIN_HUB_CHANGED: nothing changes).
 */
async function pinHub(o: {
  hub: string;
  node: string;
  dataDir: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<Result<HubPin, JoinFailure>> {
  let doc: unknown;
  try {
    const res = await (o.fetch ?? fetch)(`${o.hub}/peer/identity`, {
      signal: AbortSignal.timeout(o.timeoutMs ?? 5000),
      redirect: 'error',
    });
    if (res.status >= 500) return joinFail('JOIN_HUB_UNREACHABLE', `HTTP ${res.status}`, true);
    doc = res.ok ? await readJson(res) : undefined;
  } catch (e) {
    return joinFail('JOIN_HUB_UNREACHABLE', `${o.hub}: ${why(e)}`, true);
  }
  const d = doc as {
    node?: unknown;
    mode?: unknown;
    keys?: { kid?: unknown; publicKey?: unknown }[];
  };
  const key = d && d.mode === 'ed25519' && Array.isArray(d.keys) ? d.keys[0] : undefined;
  const name = typeof d?.node === 'string' && NODE_NAME.test(d.node) ? d.node : undefined;
  const publicKey = typeof key?.publicKey === 'string' ? key.publicKey : '';
  const kid = kidOf(publicKey);
  if (!name || !kid || kid !== key?.kid) return joinFail('JOIN_HUB_BAD_IDENTITY', o.hub);
  if (name === o.node) return joinFail('JOIN_HUB_BAD_IDENTITY', `the hub is named ${name} too`);
  const pinned = await pinnedKeys(o.dataDir, name);
  if (pinned.length && !pinned.includes(publicKey))
    return joinFail(
      'JOIN_HUB_CHANGED',
      `${name} now presents ${kid}. If its keys were remade on purpose, delete ${join(o.dataDir, 'keys', 'ring.json')} and join again`,
    );
  if (!pinned.length) await trustRemoteKey(o.dataDir, name, { kid, publicKey });
  const pin = { name, url: o.hub, kid };
  await writeFileAtomic(pinFile(o.dataDir, o.node), `${JSON.stringify(pin, null, 2)}\n`, {
    mode: 0o644,
  });
  return ok(pin);
}

/** Presents the node to the hub once. A refusal keeps the hub's code; no answer is `retry`. */
async function presentToHub(o: {
  pin: HubPin;
  token: string;
  signer: PeerSigner;
  node: string;
  url: string;
  key: { kid: string; publicKey: string };
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Promise<Result<JoinAnswer, JoinFailure>> {
  const body = new TextEncoder().encode(
    JSON.stringify({ name: o.node, url: o.url, kid: o.key.kid, publicKey: o.key.publicKey }),
  );
  const signed = await o.signer.sign(
    { to: o.pin.name, route: JOIN_ROUTE, scope: JOIN_SCOPE },
    body,
    {
      mode: 'ed25519',
    },
  );
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(`${o.pin.url}${JOIN_ROUTE}`, {
      method: 'POST',
      headers: {
        ...signed,
        'content-type': 'application/json',
        authorization: `Bearer ${o.token}`,
      },
      body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
      redirect: 'error',
    });
  } catch (e) {
    return joinFail('JOIN_HUB_UNREACHABLE', `${o.pin.url}: ${why(e)}`, true);
  }
  const answer = (await readJson(res)) as
    | { ok?: boolean; result?: JoinAnswer; error?: { code?: unknown; message?: unknown } }
    | undefined;
  if (res.ok && answer?.ok === true && answer.result) return ok(answer.result);
  const code = typeof answer?.error?.code === 'string' ? answer.error.code.slice(0, 64) : '';
  const message =
    typeof answer?.error?.message === 'string' ? answer.error.message.slice(0, 400) : '';
  // A hub that is starting or stopping answers 503; a refusal with a code is final.
  const retry =
    res.status >= 500 &&
    (code === '' || code === 'JOIN_BUSY' || code === 'NOT_READY' || code === 'SHUTTING_DOWN');
  return {
    ok: false,
    error: {
      code: code || 'JOIN_HUB_UNREACHABLE',
      message: message || `HTTP ${res.status}`,
      retry,
    },
  };
}

export interface JoinHandle {
  /** `joining` until the hub answers, then `joined` or `refused`. */
  readonly state: 'joining' | 'joined' | 'refused' | 'stopped';
  /** Settles with the hub's answer or its refusal (never while the hub is down: it retries). */
  readonly done: Promise<Result<JoinAnswer, JoinFailure>>;
  stop(): void;
}

export interface JoinLoopOptions {
  hub: string;
  token: string;
  node: string;
  dataDir: string;
  /** The node's base URL, the one its card advertises. */
  url: string;
  key: { kid: string; publicKey: string };
  signer: PeerSigner;
  /** The node's fleet: its hub entry is filled in once pinned. */
  fleet: Fleet;
  /** Called after the hub's key was pinned (the node's verifier reloads its ring). */
  pinned: () => Promise<void>;
  log: Log;
  fetch?: typeof fetch;
  retry?: { firstMs: number; maxMs: number };
}

/** The fleet entry of a hub this node reached at `url` (nothing here starts it). */
export function hubMember(name: string, url: string): FleetMember {
  const u = new URL(url);
  return {
    name,
    port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
    role: 'hub',
    file: '',
    default: true,
    url,
    remote: true,
  };
}

/** Pins the hub (when not yet pinned) and presents the node, retrying while the hub is down. */
export function joinHub(o: JoinLoopOptions): JoinHandle {
  const retry = o.retry ?? JOIN_RETRY;
  let state: JoinHandle['state'] = 'joining';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });
  const run = async (): Promise<Result<JoinAnswer, JoinFailure>> => {
    let delay = retry.firstMs;
    let pin = readPin(o.dataDir, o.node);
    let pinnedNow = false;
    for (;;) {
      let r: Result<JoinAnswer, JoinFailure>;
      if (!pinnedNow) {
        const p = await pinHub({
          hub: o.hub,
          node: o.node,
          dataDir: o.dataDir,
          ...(o.fetch ? { fetch: o.fetch } : {}),
        });
        if (p.ok) {
          pin = p.result;
          pinnedNow = true;
          Object.assign(o.fleet.hub, hubMember(pin.name, pin.url));
          await o.pinned();
          o.log('info', 'join: pinned the hub', { hub: pin.name, url: pin.url, kid: pin.kid });
        }
        r = p.ok ? await present(pin!) : p;
      } else r = await present(pin!);
      if (state === 'stopped') return r;
      if (r.ok || !r.error.retry) {
        state = r.ok ? 'joined' : 'refused';
        if (r.ok)
          o.log(
            'info',
            `joined ${r.result.hub} at ${o.hub} as ${r.result.node} (${r.result.status})`,
            {
              url: r.result.url,
              kid: r.result.kid,
            },
          );
        else o.log('error', `join refused: ${r.error.code}: ${r.error.message}`, { hub: o.hub });
        return r;
      }
      o.log(
        'warn',
        `join: ${r.error.code}: ${r.error.message}; the node serves, retrying in ${Math.round(delay / 1000)} s`,
        {
          hub: o.hub,
        },
      );
      await pause(delay);
      if ((state as JoinHandle['state']) === 'stopped') return r;
      delay = Math.min(delay * 2, retry.maxMs);
    }
  };
  const present = (pin: HubPin) =>
    presentToHub({
      pin,
      token: o.token,
      signer: o.signer,
      node: o.node,
      url: o.url,
      key: o.key,
      ...(o.fetch ? { fetch: o.fetch } : {}),
    });
  const done = run();
  return {
    get state() {
      return state;
    },
    done,
    stop() {
      state = 'stopped';
      clearTimeout(timer);
      wake?.();
    },
  };
}
