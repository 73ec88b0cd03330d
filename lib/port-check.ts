/**
 * @module port-check — a process whose port is taken stops at once with one line naming the port
 * and what to do, and the exit code `EXIT_PORT_TAKEN` (no stack trace, nothing opened or changed).
 * Binds never use `reusePort`, so a taken port is an error rather than a silently shared one.
 */

/** Exit code of a process that found its port taken (98 is Linux's EADDRINUSE); the supervisor reads it. */
export const EXIT_PORT_TAKEN = 98;

export interface PortOwner {
  /** The process's name in the fleet (`scanner`, `a2a`). */
  name: string;
  host: string;
  port: number;
  /** What to do about it, e.g. "stop it or pass --port <n>". */
  hint: string;
}

/** Whether a bind failed because the address is in use. */
export function isPortTaken(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | null;
  return err?.code === 'EADDRINUSE' || /EADDRINUSE|address already in use|port .* in use/i.test(String(err?.message));
}

export function portTakenLine(o: PortOwner): string {
  return `${o.name}: port ${o.port} on ${o.host} is already in use by another process; ${o.hint}`;
}

/**
 * Exits with one line when the port is taken, found by binding it for a moment. Called before the
 * process opens its stores, so a second copy of a running process changes nothing. Port 0 passes.
 */
export function exitIfPortTaken(o: PortOwner): void {
  if (o.port === 0) return;
  try {
    Bun.serve({ hostname: o.host, port: o.port, reusePort: false, fetch: () => new Response() }).stop(true);
  } catch (e) {
    if (!isPortTaken(e)) throw e;
    exitPortTaken(o);
  }
}

/** Runs the real bind; losing a race for the port exits the same way, any other error is thrown. */
export async function bindOrExit<T>(o: PortOwner, bind: () => T | Promise<T>): Promise<T> {
  try {
    return await bind();
  } catch (e) {
    if (!isPortTaken(e)) throw e;
    return exitPortTaken(o);
  }
}

function exitPortTaken(o: PortOwner): never {
  console.error(portTakenLine(o));
  process.exit(EXIT_PORT_TAKEN);
}
