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
export function createNonceCache(windowMs: number, capacity: number): NonceCache {
  if (!(capacity >= 1)) throw new Error('nonce cache: capacity must be at least 1');
  // Arrival order lives in a ring buffer, not in Map iteration order: iterating a Map from the
  // front after many deletions walks over every deleted slot, which made eviction O(n).
  const seenKeys = new Set<string>();
  const ring: string[] = new Array(capacity);
  const stamps = new Float64Array(capacity);
  let head = 0;
  let count = 0;
  let horizon = -Infinity;

  const dropOldest = () => {
    seenKeys.delete(ring[head]!);
    ring[head] = '';
    head = (head + 1) % capacity;
    count--;
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
      }
      const tail = (head + count) % capacity;
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
