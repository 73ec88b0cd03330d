/**
 * @module hub/http/sign-in-throttle — sign-in attempts per client address, a token bucket: `burst`
 * attempts at once, then one per `everyMs`; past that the answer is 429 with `Retry-After`. The
 * table holds at most `maxClients` addresses (the one seen longest ago is forgotten first).
 */

export interface ThrottleOptions {
  /** Attempts allowed at once (default 10). */
  burst?: number;
  /** One more attempt per this many ms (default 3 000: 300 guesses take 15 minutes). */
  everyMs?: number;
  /** Addresses tracked at once (default 4 096). */
  maxClients?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class SignInThrottle {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;
  private readonly everyMs: number;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(opts: ThrottleOptions = {}) {
    this.burst = opts.burst ?? 10;
    this.everyMs = opts.everyMs ?? 3000;
    this.maxClients = opts.maxClients ?? 4096;
    this.now = opts.now ?? Date.now;
  }

  /** Takes one attempt for `client`: 0 when allowed, else the seconds to wait. */
  take(client: string): number {
    const now = this.now();
    const b = this.buckets.get(client) ?? { tokens: this.burst, at: now };
    this.buckets.delete(client);
    b.tokens = Math.min(this.burst, b.tokens + (now - b.at) / this.everyMs);
    b.at = now;
    let wait = 0;
    if (b.tokens >= 1) b.tokens -= 1;
    else wait = Math.max(1, Math.ceil(((1 - b.tokens) * this.everyMs) / 1000));
    // Re-inserted last: the map's first entry is the address seen longest ago.
    this.buckets.set(client, b);
    while (this.buckets.size > this.maxClients)
      this.buckets.delete(this.buckets.keys().next().value!);
    return wait;
  }
}
