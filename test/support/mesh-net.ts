/**
 * Network faults for mesh tests: a TCP proxy on port 0 that can turn its open connections into
 * half-open ones (traffic swallowed both ways, nobody told), and timers a test fires by hand.
 */

import type { Socket, TCPSocketListener } from 'bun';

interface Pair {
  client: Socket<Pair>;
  upstream?: Socket<unknown>;
  /** Bytes the client sent before the upstream connection was open. */
  early: Uint8Array[];
  /** Once dark, nothing passes either way and neither side hears of a close. */
  dark: boolean;
}

export interface BlackholeProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Makes every connection open now half-open; later connections pass normally. */
  blackhole(): void;
  /** Connections currently open through the proxy. */
  readonly open: number;
  stop(): void;
}

/** Forwards loopback TCP to `targetPort`, byte for byte, until told to blackhole. */
export function startBlackholeProxy(targetPort: number): BlackholeProxy {
  const pairs = new Set<Pair>();
  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const pair: Pair = { client, early: [], dark: false };
        client.data = pair;
        pairs.add(pair);
        void Bun.connect({
          hostname: '127.0.0.1',
          port: targetPort,
          socket: {
            open(up) {
              pair.upstream = up;
              for (const b of pair.early) up.write(b);
              pair.early = [];
            },
            data(_up, d) {
              if (!pair.dark) client.write(d);
            },
            close() {
              if (!pair.dark) client.end();
            },
            error() {
              if (!pair.dark) client.end();
            },
          },
        });
      },
      data(client, d) {
        const pair = client.data;
        if (pair.dark) return;
        if (pair.upstream) pair.upstream.write(d);
        else pair.early.push(new Uint8Array(d));
      },
      close(client) {
        const pair = client.data;
        pairs.delete(pair);
        if (!pair.dark) pair.upstream?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    blackhole() {
      for (const p of pairs) p.dark = true;
    },
    get open() {
      return pairs.size;
    },
    stop() {
      for (const p of pairs) {
        p.upstream?.terminate();
        p.client.terminate();
      }
      listener.stop(true);
    },
  };
}

export type FakeTimer = { ms: number; fire: () => void };

/** Timers a test fires by hand; `next(pick)` resolves with the first pending one `pick` accepts. */
export function fakeTimers() {
  const queued: FakeTimer[] = [];
  const waiters: { pick: (t: FakeTimer) => boolean; resolve: (t: FakeTimer) => void }[] = [];
  return {
    timers: {
      setTimeout(fn: () => void, ms: number): unknown {
        const t: FakeTimer = { ms, fire: fn };
        const i = waiters.findIndex((w) => w.pick(t));
        if (i >= 0) waiters.splice(i, 1)[0]!.resolve(t);
        else queued.push(t);
        return t;
      },
      clearTimeout(t: unknown): void {
        const i = queued.indexOf(t as FakeTimer);
        if (i >= 0) queued.splice(i, 1);
      },
    },
    next(pick: (t: FakeTimer) => boolean = () => true): Promise<FakeTimer> {
      const i = queued.findIndex(pick);
      if (i >= 0) return Promise.resolve(queued.splice(i, 1)[0]!);
      return new Promise((resolve) => waiters.push({ pick, resolve }));
    },
  };
}
