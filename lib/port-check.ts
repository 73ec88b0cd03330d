/**
 * @module lib/port-check — a process whose port is taken stops at once with one line naming the port
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

/** A port found taken before anything was opened; `code` is what a failed bind carries too. */
export class PortTakenError extends Error {
  readonly code = 'EADDRINUSE';
  constructor(
    readonly owner: string,
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} is already in use`);
  }
}

/** Whether a bind failed because the address is in use. */
export function isPortTaken(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | null;
  return (
    err?.code === 'EADDRINUSE' ||
    /EADDRINUSE|address already in use|port .* in use/i.test(String(err?.message))
  );
}

function portTakenLine(o: PortOwner): string {
  return `${o.name}: port ${o.port} on ${o.host} is already in use by another process; ${o.hint}`;
}

/**
 * Throws `PortTakenError` when the port is taken, found by binding it for a moment. Called before
 * a process opens its stores, so a second copy of a running process changes nothing. Port 0 passes.
 */
export function assertPortFree(owner: string, host: string, port: number): void {
  if (port === 0) return;
  try {
    Bun.serve({ hostname: host, port, reusePort: false, fetch: () => new Response() }).stop(true);
  } catch (e) {
    if (isPortTaken(e)) throw new PortTakenError(owner, host, port);
    throw e;
  }
}

/** Exits with one line when the port is taken (see `assertPortFree`). */
export function exitIfPortTaken(o: PortOwner): void {
  try {
    assertPortFree(o.name, o.host, o.port);
  } catch (e) {
    if (!(e instanceof PortTakenError)) throw e;
    exitPortTaken(o);
  }
}

/**
 * Runs what opens and binds; a taken port (found first, or a race lost at the bind) exits with
 * one line, any other error is thrown. A `PortTakenError` names its own process and port.
 */
export async function bindOrExit<T>(
  o: Omit<PortOwner, 'name' | 'port'> & Partial<PortOwner>,
  bind: () => T | Promise<T>,
): Promise<T> {
  try {
    return await bind();
  } catch (e) {
    if (!isPortTaken(e)) throw e;
    const found = e instanceof PortTakenError ? { name: e.owner, host: e.host, port: e.port } : {};
    return exitPortTaken({ name: '?', port: 0, ...o, ...found } as PortOwner);
  }
}

function exitPortTaken(o: PortOwner): never {
  console.error(portTakenLine(o));
  process.exit(EXIT_PORT_TAKEN);
}
