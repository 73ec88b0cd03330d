/**
 * @module peer-nonces — the bounded replay cache behind the peer verifier: remembers each accepted
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
  const entries = new Map<string, number>(); // key -> ts; Map keeps insertion order
  let horizon = -Infinity;

  const sweep = (now: number) => {
    // Entries are roughly in timestamp order; stop at the first live one (bounded work per call).
    for (const [key, ts] of entries) {
      if (ts + windowMs >= now) break;
      entries.delete(key);
    }
  };

  return {
    seen: (key) => entries.has(key),
    admit(key, ts, now) {
      if (ts <= horizon) return 'horizon';
      if (entries.has(key)) return 'replay';
      sweep(now);
      while (entries.size >= capacity) {
        const first = entries.entries().next().value as [string, number];
        entries.delete(first[0]);
        if (first[1] > horizon) horizon = first[1];
      }
      entries.set(key, ts);
      return 'fresh';
    },
    get size() {
      return entries.size;
    },
  };
}
