/**
 * @module lib/a2a/engine/turn-gate — how many agent turns one principal may have running at once
 * (by owner key; all anonymous callers are one key, so their bound is per process), so no caller
 * holds the node's event loop with work: a send past it is refused `TOO_MANY_TURNS` before
 * anything is stored, on every binding and every path that sends (the mesh inbox included).
 */

export class TurnGate {
  private readonly running = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Turns running for `owner`. */
  runningFor(owner: string): number {
    return this.running.get(owner) ?? 0;
  }

  /** A slot for `owner`, given back by the function returned (once); undefined at the bound. */
  enter(owner: string): (() => void) | undefined {
    const n = this.runningFor(owner);
    if (n >= this.max) return undefined;
    this.running.set(owner, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.runningFor(owner) - 1;
      if (left > 0) this.running.set(owner, left);
      else this.running.delete(owner);
    };
  }
}
