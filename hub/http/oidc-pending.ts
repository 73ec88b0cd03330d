/**
 * @module hub/http/oidc-pending — the console's sign-ins through an issuer that have left for the
 * issuer and not come back: each under its `state`, with its `nonce`, PKCE verifier, redirect URI,
 * page to return to, and the digest of the secret the starting browser holds in a cookie. Bounded
 * in count and age (docs/limits.md): past the count a new sign-in is refused (nobody's pending
 * sign-in is dropped for it), past the age one is gone. A state is taken once.
 */

import type { CodeFlow } from '../../lib/auth/oidc/code-flow.ts';
import type { OidcVerifier } from '../../lib/auth/oidc/verifier.ts';
import { hashSecret } from '../../lib/auth/secret.ts';

/** What the console's sign-in through an issuer needs: the flow, the verifier, the pending table. */
export interface ConsoleOidc {
  flow: CodeFlow;
  verifier: OidcVerifier;
  pending: PendingSignIns;
}

/** Bounds of the pending sign-ins (docs/limits.md). */
const PENDING_SIGN_INS = Object.freeze({
  /** Most sign-ins waiting for the issuer at once; past it a new one is `OIDC_SIGN_IN_FULL`. */
  max: 256,
  /** How long the issuer may take to send the browser back (ms). */
  ttlMs: 10 * 60_000,
});

export interface PendingSignIn {
  nonce: string;
  verifier: string;
  redirectUri: string;
  next: string;
  /** SHA-256 of the secret in the starting browser's cookie. */
  browser: string;
  expires: number;
}

export type PendingTake =
  | { ok: true; pending: PendingSignIn }
  | { ok: false; why: 'unknown' | 'browser' };

export class PendingSignIns {
  private readonly byState = new Map<string, PendingSignIn>();
  private readonly max: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(opts: { max?: number; ttlMs?: number; now?: () => number } = {}) {
    this.max = opts.max ?? PENDING_SIGN_INS.max;
    this.ttlMs = opts.ttlMs ?? PENDING_SIGN_INS.ttlMs;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.byState.size;
  }

  /** Seconds the starting browser's cookie lives. */
  get maxAgeSeconds(): number {
    return Math.ceil(this.ttlMs / 1000);
  }

  private prune(): void {
    const now = this.now();
    // Insertion order is age order: the oldest come first.
    for (const [state, p] of this.byState) {
      if (p.expires > now) break;
      this.byState.delete(state);
    }
  }

  /** Keeps a sign-in under `state`; false when the table is full of live ones. */
  add(
    state: string,
    p: Omit<PendingSignIn, 'expires' | 'browser'>,
    browserSecret: string,
  ): boolean {
    this.prune();
    if (this.byState.size >= this.max) return false;
    this.byState.set(state, {
      ...p,
      browser: hashSecret(browserSecret),
      expires: this.now() + this.ttlMs,
    });
    return true;
  }

  /**
   * The sign-in `state` names, taken (a second use is `unknown`), when one of the browser's cookie
   * values is its secret. Another browser's callback (`browser`) leaves it for its own browser.
   */
  take(state: string, browserSecrets: readonly string[]): PendingTake {
    this.prune();
    const p = state.length <= 128 ? this.byState.get(state) : undefined;
    if (!p || p.expires <= this.now()) return { ok: false, why: 'unknown' };
    if (!browserSecrets.some((s) => hashSecret(s) === p.browser))
      return { ok: false, why: 'browser' };
    this.byState.delete(state);
    return { ok: true, pending: p };
  }
}
