/**
 * @module lib/mesh/activity — the local activity view (idle / conversing / working), inferred from
 * sends, deliveries and inbound messages; it never crosses the wire.
 */

export type Activity = 'idle' | 'conversing' | 'working';

/** A peer is "conversing" for this long after an exchange with it. */
const CONVERSATION_WINDOW_MS = 30_000;
/** A peer is "working" for at most this long after it acknowledged our message, until it answers. */
const PEER_WORKING_WINDOW_MS = 180_000;

export function createActivity(now: () => number) {
  const exchange = new Map<string, number>();
  const working = new Map<string, number>();
  let handling = 0;
  let lastAny = -Infinity;
  const touch = (name: string) => {
    const t = now();
    exchange.set(name, t);
    lastAny = t;
  };
  return {
    sent(to: string[]): void {
      for (const n of to) touch(n);
      if (to.length === 0) lastAny = now();
    },
    /** The peer acknowledged our message: it is now working on it. */
    delivered(to: string): void {
      working.set(to, now());
      touch(to);
    },
    /** A message arrived from a peer: it answered, so it is no longer working for us. */
    received(from: string): void {
      working.delete(from);
      touch(from);
    },
    handlingStarted(): void {
      handling++;
    },
    handlingEnded(): void {
      handling = Math.max(0, handling - 1);
    },
    peer(name: string): Activity {
      const t = now();
      const w = working.get(name);
      if (w !== undefined && t - w < PEER_WORKING_WINDOW_MS) return 'working';
      const e = exchange.get(name);
      return e !== undefined && t - e < CONVERSATION_WINDOW_MS ? 'conversing' : 'idle';
    },
    self(): Activity {
      if (handling > 0) return 'working';
      return now() - lastAny < CONVERSATION_WINDOW_MS ? 'conversing' : 'idle';
    },
  };
}
