/**
 * @module hub/fleet/join — the hub's `POST /peer/join`: a node run elsewhere presents its name,
 * base URL and Ed25519 public key with a bearer token, the request signed with that key. The hub
 * checks the token, the proof, that the name is free or already this key's, and only then that the
 * node at that URL is the one asking (its card names it, it publishes that key, its interfaces are
 * on its own host and ports; every failure the same answer); then it pins the key in
 * its ring, writes the node into its fleet file and calls it from then on. Joins run one at a
 * time, so the fleet file and the ring stay whole; the fleet registry (lib/fleet/registry.ts)
 * picks up `bun run fleet remove` and hand edits.
 * This file takes the request in order and keeps joins in line; what a join carries is
 * hub/fleet/join-request.ts, its checks and writes hub/fleet/join-admit.ts.
 */

import { JOIN_ROUTE } from '../../lib/fleet/join.ts';
import { admit, checkUrl, type JoinServiceOptions, nameRefusal } from './join-admit.ts';
import { FleetFileInvalid } from './fleet-file.ts';

export type { JoinServiceOptions } from './join-admit.ts';
import { json, readPresented, refuse } from './join-request.ts';

/** The answer of a hub that takes no joins (created without a writable fleet file). */
export const joinsNotOffered = (): Response => refuse('JOIN_NOT_OFFERED');

/** `fn`'s answer, or JOIN_FLEET_FILE_INVALID (logged, naming the file) when the fleet file does not read. */
async function unlessUnreadable<T>(
  o: JoinServiceOptions,
  fn: () => Promise<T>,
): Promise<T | Response> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof FleetFileInvalid)) throw e;
    o.log('error', 'join refused: the fleet file does not read', {
      file: e.path,
      error: e.message,
    });
    return refuse('JOIN_FLEET_FILE_INVALID');
  }
}

export function createJoinService(o: JoinServiceOptions) {
  const self = o.registry.live.hub.name;
  const maxWaiting = o.maxWaiting ?? 16;
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  /** Runs `fn` after every join before it: one writer of the fleet file and the ring at a time. */
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    waiting++;
    const run = queue.then(fn).finally(() => waiting--);
    queue = run.catch(() => {});
    return run;
  };

  return {
    /** Answers `POST /peer/join`; undefined for any other path. */
    async fetch(req: Request): Promise<Response | undefined> {
      if (new URL(req.url).pathname !== JOIN_ROUTE) return undefined;
      if (req.method !== 'POST')
        return json(
          { ok: false, error: { code: 'METHOD_NOT_ALLOWED', message: 'POST a join' } },
          405,
        );
      // 1. A principal's token, before anything is read or written.
      const who = await o.authenticate(req);
      if (!who.ok) return refuse('UNAUTHENTICATED', who.error.message);
      if (who.result.kind !== 'token') return refuse('UNAUTHENTICATED');
      // 2. What the node presents, signed with the key it presents.
      const p = await readPresented(req, self);
      if (p instanceof Response) return p;
      // 3. The name is free or already this key's: nothing is probed for a name it cannot have.
      const taken = await unlessUnreadable(o, () => nameRefusal(o, p));
      if (taken) return taken;
      // 4. One join at a time probes the URL (only the one presented, bounded in time), decides
      // and writes: a token holder cannot fan probes out.
      if (waiting >= maxWaiting) return refuse('JOIN_BUSY');
      const by = who.result.name;
      return serialized(async () => {
        const checked = await checkUrl(o, p);
        return checked instanceof Response
          ? checked
          : unlessUnreadable(o, () => admit(o, p, by, checked.role));
      });
    },
  };
}
