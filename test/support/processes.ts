/**
 * Test support: real processes of the fleet (`bun node/main.ts`, `bun hub/main.ts`,
 * `bun hub/cli/fleet.ts`) on ports the OS says are free, their output read line by line, and
 * waits on a condition (each check a real look at the process table or a real request).
 */

import { reservePorts } from './ports.ts';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { procStatFields } from '../../lib/proc-stat.ts';
import { bunCommand } from './bundle.ts';
import { writeTestToken } from './node.ts';

export const ROOT = resolve(import.meta.dir, '../..');

/** Loopback ports free right now, from below the ephemeral range (support/ports.ts). */
export function freePorts(n: number): number[] {
  return reservePorts(n);
}

export interface FleetMember {
  name: string;
  port: number;
  file: string;
}

/** Writes a fleet file whose hub is `a2a` on `hubPort` and whose nodes are `nodes`. */
export function writeFleetFile(dir: string, hubPort: number, nodes: FleetMember[]): string {
  const file = join(dir, 'fleet.json');
  writeFileSync(
    file,
    JSON.stringify({
      hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
      nodes: nodes.map((n) => ({ ...n, role: n.name })),
    }),
  );
  return file;
}

/** Reads a stream line by line; `until` resolves with the first line matching (from index `from`). */
export function lineReader(stream: ReadableStream<Uint8Array>) {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let buf = '';
  let ended!: () => void;
  const done = new Promise<void>((r) => (ended = r));
  void (async () => {
    const dec = new TextDecoder();
    const reader = stream.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buf += dec.decode(r.value);
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        for (const w of [...waiters])
          if (w.re.test(line)) waiters.splice(waiters.indexOf(w), 1), w.resolve(line);
      }
    }
    if (buf) lines.push(buf);
    ended();
  })();
  return {
    lines,
    /** Resolves when the stream has ended (the process closed it). */
    done,
    until(re: RegExp, from = 0): Promise<string> {
      const seen = lines.slice(from).find((l) => re.test(l));
      return seen ? Promise.resolve(seen) : new Promise((r) => waiters.push({ re, resolve: r }));
    },
  };
}

export interface Proc {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  out: ReturnType<typeof lineReader>;
  err: ReturnType<typeof lineReader>;
}

/** Spawns `bun <args>` in the project root with the fleet file and data folder given. */
export function spawnBun(
  args: string[],
  env: { FLEET_FILE: string; DATA_DIR: string } & Record<string, string>,
): Proc {
  // The helpers call as the test principal: its token is one the process accepts.
  if (!existsSync(join(env.DATA_DIR, 'keys', 'tokens.json'))) writeTestToken(env.DATA_DIR);
  const proc = Bun.spawn(bunCommand(args), {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { proc, out: lineReader(proc.stdout), err: lineReader(proc.stderr) };
}

/** Starts `bun node/main.ts --name <name>` and resolves once it says it listens. */
export async function startNodeProcess(
  name: string,
  env: { FLEET_FILE: string; DATA_DIR: string } & Record<string, string>,
): Promise<Proc & { url: string }> {
  const p = spawnBun(['node/main.ts', '--name', name], env);
  const line = await Promise.race([
    p.out.until(/ listening on /),
    p.proc.exited.then((code) => {
      throw new Error(`${name} exited with ${code}: ${p.err.lines.join('\n')}`);
    }),
  ]);
  return { ...p, url: /listening on (\S+)/.exec(line)![1]! };
}

/** True while `pid` is a live process; a zombie (dead, not yet reaped) is not running. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return procStatFields(pid)?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Checks `cond` until it holds, with a short pause between checks; throws after `tries` checks
 * (the bound, not a timing claim). For conditions no event announces, such as a process ending
 * that is not our child.
 */
export async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  tries = 400,
): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await Bun.sleep(25);
  }
  throw new Error(`never happened: ${what}`);
}

/** A process started with its own settings only (no DATA_DIR, FLEET_FILE or PORT of the caller's), its output read line by line. */
export function spawnReading(cmd: string[], cwd: string, env: Record<string, string | undefined>) {
  const proc = Bun.spawn(cmd, {
    cwd,
    env: { ...process.env, DATA_DIR: undefined, FLEET_FILE: undefined, PORT: undefined, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { proc, out: lineReader(proc.stdout), err: lineReader(proc.stderr) };
}
