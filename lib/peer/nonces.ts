/**
 * @module lib/peer/nonces — the bounded replay cache behind the peer verifier: remembers each accepted
 * nonce for as long as its timestamp could still pass the window, and never grows past `capacity`.
 */

export interface NonceCache {
  /** True when the key was accepted before and is still remembered. */
  seen(key: string): boolean;
  /**
   * Records a key that arrived with timestamp `ts` (ms). Returns 'fresh' if it was unknown,
   * 'replay' if it was already remembered, 'horizon' if `ts` is at or before the replay horizon
   * (an evicted entry could have had this timestamp, so freshness cannot be proven).
   */
  admit(key: string, ts: number, now: number): 'fresh' | 'replay' | 'horizon';
  readonly size: number;
}

/**
 * Creates a nonce cache. An entry lives until `ts + windowMs`, after which the timestamp check
 * alone refuses a replay. When the cache is full of live entries the oldest insertion is evicted
 * and the horizon is raised to its timestamp: any later request whose timestamp is not newer than
 * the horizon is refused, so eviction never re-opens a replay (it only narrows the window under a
 * flood, which only key holders can produce because nonces are recorded after the signature).
 */
/** Slots the buffer starts with. */
const FIRST_SLOTS = 1024;

export function createNonceCache(windowMs: number, capacity: number): NonceCache {
  if (!(capacity >= 1)) throw new Error('nonce cache: capacity must be at least 1');
  // Arrival order lives in a ring buffer, not in Map iteration order: iterating a Map from the
  // front after many deletions walks over every deleted slot, which made eviction O(n). The
  // buffer starts small and doubles as entries arrive, up to `capacity`: sized up front, an idle
  // process held megabytes for nonces it had not seen.
  const seenKeys = new Set<string>();
  let ring: string[] = new Array(Math.min(capacity, FIRST_SLOTS));
  let stamps = new Float64Array(ring.length);
  let head = 0;
  let count = 0;
  let horizon = -Infinity;

  const dropOldest = () => {
    seenKeys.delete(ring[head]!);
    ring[head] = '';
    head = (head + 1) % ring.length;
    count--;
  };
  /** Doubles the buffer (at most to `capacity`), oldest entry first. */
  const grow = () => {
    const size = Math.min(capacity, ring.length * 2);
    const keys: string[] = new Array(size);
    const times = new Float64Array(size);
    for (let i = 0; i < count; i++) {
      const at = (head + i) % ring.length;
      keys[i] = ring[at]!;
      times[i] = stamps[at]!;
    }
    ring = keys;
    stamps = times;
    head = 0;
  };

  return {
    seen: (key) => seenKeys.has(key),
    admit(key, ts, now) {
      if (ts <= horizon) return 'horizon';
      if (seenKeys.has(key)) return 'replay';
      // Entries are roughly in timestamp order: expire from the front until a live one.
      while (count > 0 && stamps[head]! + windowMs < now) dropOldest();
      if (count === capacity) {
        if (stamps[head]! > horizon) horizon = stamps[head]!;
        dropOldest();
      } else if (count === ring.length) grow();
      const tail = (head + count) % ring.length;
      ring[tail] = key;
      stamps[tail] = ts;
      count++;
      seenKeys.add(key);
      return 'fresh';
    },
    get size() {
      return count;
    },
  };
}
