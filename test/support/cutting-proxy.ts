/**
 * @module test/support/cutting-proxy — a TCP proxy on loopback that cuts connections at random
 * points: each connection may pass a random number of bytes from the server to the client (drawn
 * from a seeded generator, so a failing run can be repeated), then both sides are closed. After
 * `cuts` cuts it passes everything. It speaks no protocol, so it cuts HTTP/1.1 (SSE) and HTTP/2
 * (gRPC) alike, in the middle of a frame as often as between two.
 */

import type { Socket, TCPSocketListener } from 'bun';

export interface CuttingProxyOptions {
  /** Where connections go: `127.0.0.1:<port>`. */
  target: { host: string; port: number };
  /** Bytes a connection may pass towards the client before it is cut: [min, max]. */
  window: [number, number];
  /** Bytes the first connection passes at least (so that a stream's first frame gets through). */
  first?: number;
  /**
   * When given, the first connection is not cut until this answers true (the client has read an
   * event: a fetch may drop what it had buffered when its connection breaks, so bytes passed are
   * not bytes read), then after a drawn number of bytes more.
   */
  firstRead?: () => boolean;
  /** Cuts made at most; later connections are never cut. */
  cuts: number;
  /** The random generator's seed. */
  seed: number;
}

export interface CuttingProxy {
  port: number;
  url: string;
  /** How many connections it has cut so far. */
  readonly cut: number;
  stop(): void;
}

/** A small seeded generator (mulberry32): the same seed, the same cuts. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Pair {
  upstream?: Socket<Pair>;
  client: Socket<Pair>;
  /** Bytes still allowed towards the client; Infinity when this connection is never cut. */
  budget: number;
  /** Bytes not yet taken by each side (a socket may take part of a write). */
  toClient: Uint8Array[];
  toUpstream: Uint8Array[];
  closed: boolean;
  /** Close once what is queued for the client is written (the cut). */
  cutting: boolean;
  /** The first connection, uncut until the client has read an event (`firstRead`). */
  waitsForRead?: boolean;
}

/** Writes what a side has queued, keeping what the socket did not take. */
function flush(socket: Socket<Pair> | undefined, queue: Uint8Array[]): boolean {
  if (!socket) return queue.length === 0;
  while (queue.length) {
    const head = queue[0]!;
    const n = socket.write(head);
    if (n < head.byteLength) {
      queue[0] = head.subarray(n);
      return false;
    }
    queue.shift();
  }
  return true;
}

export async function startCuttingProxy(o: CuttingProxyOptions): Promise<CuttingProxy> {
  const next = random(o.seed);
  let cut = 0;
  let connections = 0;
  const pairs = new Set<Pair>();
  const draw = (): number => {
    if (cut >= o.cuts) return Number.POSITIVE_INFINITY;
    const [min, max] = o.window;
    const n = Math.floor(min + next() * (max - min));
    return connections++ === 0 ? Math.max(n, o.first ?? 0) : n;
  };
  const close = (p: Pair) => {
    if (p.closed) return;
    p.closed = true;
    pairs.delete(p);
    p.client.end();
    p.upstream?.end();
  };
  const toClient = (p: Pair) => {
    if (flush(p.client, p.toClient) && p.cutting) close(p);
  };
  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const waitsForRead = !!o.firstRead && connections === 0;
        if (waitsForRead) connections++;
        const pair: Pair = {
          client,
          waitsForRead,
          budget: waitsForRead ? Number.POSITIVE_INFINITY : draw(),
          toClient: [],
          toUpstream: [],
          closed: false,
          cutting: false,
        };
        client.data = pair;
        pairs.add(pair);
        void Bun.connect<Pair>({
          hostname: o.target.host,
          port: o.target.port,
          socket: {
            open(up) {
              up.data = pair;
              pair.upstream = up;
              flush(up, pair.toUpstream);
            },
            data(_up, bytes) {
              if (pair.closed || pair.cutting) return;
              if (pair.waitsForRead && o.firstRead?.()) {
                pair.waitsForRead = false;
                pair.budget = draw();
              }
              if (bytes.byteLength <= pair.budget) {
                pair.budget -= bytes.byteLength;
                pair.toClient.push(new Uint8Array(bytes));
              } else {
                // The cut: what fits goes through, then both sides are closed mid-stream.
                pair.toClient.push(new Uint8Array(bytes.subarray(0, pair.budget)));
                pair.cutting = true;
                cut++;
              }
              toClient(pair);
            },
            drain: (up) => void flush(up, pair.toUpstream),
            close: () => close(pair),
            error: () => close(pair),
          },
        }).catch(() => close(pair));
      },
      data(client, bytes) {
        const pair = client.data;
        if (pair.closed) return;
        pair.toUpstream.push(new Uint8Array(bytes));
        flush(pair.upstream, pair.toUpstream);
      },
      drain: (client) => toClient(client.data),
      close: (client) => close(client.data),
      error: (client) => close(client.data),
    },
  });
  return {
    port: listener.port,
    url: `http://127.0.0.1:${listener.port}`,
    get cut() {
      return cut;
    },
    stop() {
      for (const p of [...pairs]) close(p);
      listener.stop(true);
    },
  };
}
