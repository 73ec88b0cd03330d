/**
 * @module hub/mesh/timers — the clock the mesh's realtime side schedules with (hello timeouts,
 * heartbeat, the end of a slow consumer), passed in so a test can drive it by hand.
 */

export interface Timers {
  setTimeout: (fn: () => void, ms: number) => ReturnType<typeof setTimeout>;
  clearTimeout: (t: ReturnType<typeof setTimeout>) => void;
  setInterval: (fn: () => void, ms: number) => ReturnType<typeof setInterval>;
  clearInterval: (t: ReturnType<typeof setInterval>) => void;
}

export const REAL_TIMERS: Timers = Object.freeze({
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (t: ReturnType<typeof setTimeout>) => clearTimeout(t),
  setInterval: (fn: () => void, ms: number) => setInterval(fn, ms),
  clearInterval: (t: ReturnType<typeof setInterval>) => clearInterval(t),
});
