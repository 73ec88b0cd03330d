/**
 * @module lib/net/gate — at most `limit` tasks at a time, and at most `maxWaiting` waiting for a turn:
 * the bound that keeps one kind of outgoing work (webhook deliveries) from taking every
 * connection or growing without end.
 */

export interface Gate {
  /** Runs `task` when a turn is free; undefined (nothing run) when the waiting line is full. */
  run<T>(task: () => Promise<T>): Promise<T> | undefined;
  readonly active: number;
  readonly waiting: number;
}

export function createGate(limit: number, maxWaiting: number): Gate {
  let active = 0;
  const line: (() => void)[] = [];
  // A finished task hands its turn straight to the next in line, so no newcomer slips in between.
  const release = () => {
    const waiter = line.shift();
    if (waiter) waiter();
    else active--;
  };
  const exec = async <T>(task: () => Promise<T>): Promise<T> => {
    try {
      return await task();
    } finally {
      release();
    }
  };
  return {
    get active() {
      return active;
    },
    get waiting() {
      return line.length;
    },
    run(task) {
      if (active < limit) {
        active++;
        return exec(task);
      }
      if (line.length >= maxWaiting) return undefined;
      return new Promise<void>((r) => line.push(r)).then(() => exec(task));
    },
  };
}
