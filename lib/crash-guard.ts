/**
 * @module lib/crash-guard — the last resort of a serving process: an error nothing handled (a
 * rejected promise nobody awaited, an exception thrown from a timer) is logged and the process
 * keeps serving, instead of one bad request stopping a node or the hub for everybody.
 *
 * Every such error is a bug to fix where it starts; this guard only keeps the others' requests
 * answered meanwhile. Only the error's kind and where it was thrown are logged, never its message
 * (it could carry a caller's data or a secret).
 */

import type { Log } from './log.ts';

/** Where an error was thrown: the first stack frame, or undefined. */
function thrownAt(e: unknown): string | undefined {
  const stack = (e as Error | undefined)?.stack;
  if (typeof stack !== 'string') return undefined;
  const frame = stack.split('\n').find((l) => l.trimStart().startsWith('at '));
  return frame?.trim().slice(3, 300);
}

/** Installs the guard once per process; answers the number of errors it has caught so far. */
export function installCrashGuard(log: Log): { caught(): number } {
  let count = 0;
  const report = (kind: 'unhandledRejection' | 'uncaughtException') => (e: unknown) => {
    count++;
    log('error', 'unexpected error; still serving', {
      kind,
      error: (e as Error | undefined)?.name ?? typeof e,
      at: thrownAt(e),
      count,
    });
  };
  process.on('unhandledRejection', report('unhandledRejection'));
  process.on('uncaughtException', report('uncaughtException'));
  return { caught: () => count };
}
