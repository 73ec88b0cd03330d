/**
 * @module lib/peer/deadlines — one timer for the deadlines of every call in flight: each call gets
 * an AbortController, filed in the bucket of the tick its deadline falls in, and one interval
 * (running only while a call waits, and never keeping the process alive) aborts the buckets
 * whose tick has passed. `AbortSignal.timeout` per call cost a timer of its own per request;
 * this costs a Map entry. A deadline fires at most one tick late.
 */

export interface Deadline {
  readonly signal: AbortSignal;
  /** The call is over: its deadline is dropped. */
  done(): void;
}

export interface Deadlines {
  /** A signal aborted with a `TimeoutError` once `ms` milliseconds have passed. */
  start(ms: number): Deadline;
  /** Calls waiting (for tests and metrics). */
  readonly size: number;
  /** Aborts what is due now (the interval's own step; tests call it with their clock). */
  sweep(): void;
}

export function createDeadlines(
  tickMs = 20,
  now: () => number = performance.now.bind(performance),
): Deadlines {
  // One lane per timeout length: within a lane deadlines are filed in time order, so a sweep
  // stops at the first bucket not yet due. Callers use a handful of lengths.
  const lanes = new Map<number, Map<number, Set<AbortController>>>();
  let size = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  const sweep = () => {
    const due = Math.floor(now() / tickMs);
    for (const [ms, buckets] of lanes) {
      for (const [tick, calls] of buckets) {
        if (tick > due) break;
        buckets.delete(tick);
        size -= calls.size;
        const aborted = [...calls];
        calls.clear(); // a call's done() after its abort finds nothing to drop
        for (const c of aborted)
          c.abort(new DOMException('The call did not finish in time', 'TimeoutError'));
      }
      if (buckets.size === 0) lanes.delete(ms);
    }
    if (size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
  return {
    start(ms) {
      const c = new AbortController();
      // Rounded up, so a call never times out early.
      const tick = Math.ceil((now() + ms) / tickMs);
      let buckets = lanes.get(ms);
      if (!buckets) lanes.set(ms, (buckets = new Map()));
      let calls = buckets.get(tick);
      if (!calls) buckets.set(tick, (calls = new Set()));
      calls.add(c);
      size++;
      if (!timer) {
        timer = setInterval(sweep, tickMs);
        timer.unref?.();
      }
      const lane = buckets;
      return {
        signal: c.signal,
        done() {
          if (!calls.delete(c)) return;
          size--;
          if (calls.size === 0) lane.delete(tick);
        },
      };
    },
    get size() {
      return size;
    },
    sweep,
  };
}
