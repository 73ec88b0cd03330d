/**
 * @module lib/model/health — whether a node's model answers: a ping at start and every `pingMs`,
 * and every real call reports its outcome too. A card says agent-backed only while this says up.
 */

import type { Log } from '../log.ts';
import { ping, type ModelEndpoint } from './chat.ts';

export interface ModelHealth {
  /** True while the last ping or call succeeded. */
  readonly up: boolean;
  /** A real call's outcome counts like a ping. */
  report(ok: boolean): void;
  /** Pings now and answers the new state (tests, the boot self-check). */
  check(): Promise<boolean>;
  /** Starts the periodic ping. */
  start(): void;
  stop(): void;
}

export function modelHealth(
  endpoint: ModelEndpoint,
  opts: { pingMs: number; timeoutMs?: number; log: Log; name: string; fetch?: typeof fetch },
): ModelHealth {
  let up = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const set = (ok: boolean) => {
    if (ok !== up)
      opts.log(
        ok ? 'info' : 'warn',
        ok ? 'model answers: agent-backed' : 'model does not answer: keyword agent',
        { node: opts.name, model: endpoint.model },
      );
    up = ok;
  };
  const health: ModelHealth = {
    get up() {
      return up;
    },
    report: set,
    async check() {
      set(await ping(endpoint, opts.timeoutMs ?? Math.min(opts.pingMs, 10_000), opts.fetch));
      return up;
    },
    start() {
      if (timer) return;
      void health.check();
      timer = setInterval(() => void health.check(), opts.pingMs);
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
  return health;
}
