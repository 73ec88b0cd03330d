/**
 * @module lib/peer/deadlines — one timer for the deadlines of every call in flight: the calls whose
 * deadline falls in one tick share a bucket and its AbortController, and one interval (running
 * only while a call waits, and never keeping the process alive) aborts the buckets whose tick has
 * passed. `AbortSignal.timeout` per call cost a timer of its own per request, a controller per
 * call a few µs; this costs a count. A deadline fires at most one tick late; a bucket whose calls
 * are all done is dropped without an abort (a done call's signal may still abort with its
 * bucket, when others in it are late: nothing listens to it then).
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

/** The calls whose deadline falls in one tick: their one controller, and how many are not done. */
interface Bucket {
  c: AbortController;
  calls: number;
}

export function createDeadlines(
  tickMs = 20,
  now: () => number = performance.now.bind(performance),
): Deadlines {
  // One lane per timeout length: within a lane deadlines are filed in time order, so a sweep
  // stops at the first bucket not yet due. Callers use a handful of lengths.
  const lanes = new Map<number, Map<number, Bucket>>();
  let size = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  const sweep = () => {
    const due = Math.floor(now() / tickMs);
    for (const [ms, buckets] of lanes) {
      for (const [tick, bucket] of buckets) {
        if (tick > due) break;
        buckets.delete(tick);
        size -= bucket.calls;
        bucket.calls = 0; // a call's done() after its abort finds nothing to drop
        bucket.c.abort(new DOMException('The call did not finish in time', 'TimeoutError'));
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
      // Rounded up, so a call never times out early.
      const tick = Math.ceil((now() + ms) / tickMs);
      let buckets = lanes.get(ms);
      if (!buckets) lanes.set(ms, (buckets = new Map()));
      let bucket = buckets.get(tick);
      if (!bucket) buckets.set(tick, (bucket = { c: new AbortController(), calls: 0 }));
      const mine = bucket;
      mine.calls++;
      size++;
      if (!timer) {
        timer = setInterval(sweep, tickMs);
        timer.unref?.();
      }
      const lane = buckets;
      let open = true;
      return {
        signal: mine.c.signal,
        done() {
          if (!open || mine.c.signal.aborted) return;
          open = false;
          size--;
          if (--mine.calls === 0) lane.delete(tick);
        },
      };
    },
    get size() {
      return size;
    },
    sweep,
  };
}
