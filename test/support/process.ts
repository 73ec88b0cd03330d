/**
 * Test support: a node or the hub as a real process (`bun node/main.ts`, `bun hub/main.ts`) on
 * port 0 with its own data folder, read until it says where it listens. Attacks that would stop a
 * process must be tried against one.
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bunCommand } from './bundle.ts';
import { tempDir, writeTestToken } from './node.ts';

const root = resolve(import.meta.dir, '../..');

export interface ServingProcess {
  url: string;
  dataDir: string;
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Whether the process is still running (its exit has not been seen). */
  alive(): boolean;
  /** Everything it wrote to stderr so far (its log). */
  log(): string;
  /** Everything it wrote to stdout so far. */
  out(): string;
  /** Resolves with the log once it contains `text`; rejects if the process ends first. */
  waitForLog(text: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts `bun <entry> …args` with a fleet file whose hub and nodes listen on port 0 (so nothing
 * collides with a running fleet), and answers once it printed `listening on <url>`.
 */
export async function startProcess(
  entry: 'hub/main.ts' | 'node/main.ts',
  args: string[] = [],
  env: Record<string, string> = {},
  /** A fleet to join instead (its data folder is the caller's to remove). */
  shared?: { dataDir: string; fleetFile: string },
): Promise<ServingProcess> {
  const dataDir = shared?.dataDir ?? tempDir('lume-a2a-proc-');
  const fleetFile = shared?.fleetFile ?? join(dataDir, 'fleet.json');
  if (!shared)
    writeFileSync(
      fleetFile,
      JSON.stringify({
        hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
        nodes: [
          { name: 'scanner', port: 0, role: 'sectors', file: 'node/scanner/index.ts' },
          { name: 'crm', port: 0, role: 'customers', file: 'node/crm/index.ts' },
        ],
      }),
    );
  // The process accepts the test principal's token, as it would one made with `bun run keys token add`.
  if (!existsSync(join(dataDir, 'keys', 'tokens.json'))) writeTestToken(dataDir);
  const proc = Bun.spawn(bunCommand([entry, ...args]), {
    cwd: root,
    env: {
      ...process.env,
      FLEET_FILE: fleetFile,
      DATA_DIR: dataDir,
      ...(shared ? {} : { PORT: '0' }),
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  let err = '';
  let errEnded = false;
  // Woken on every chunk of stderr (and at its end), so a test waits for a line, never a time.
  const logWaiters = new Set<() => void>();
  void (async () => {
    const errReader = proc.stderr.getReader();
    for (let r = await errReader.read(); !r.done; r = await errReader.read()) {
      err += new TextDecoder().decode(r.value);
      for (const wake of logWaiters) wake();
    }
    errEnded = true;
    for (const wake of logWaiters) wake();
  })();
  const waitForLog = (text: string) =>
    new Promise<string>((done, fail) => {
      const check = () => {
        if (err.includes(text)) done(err);
        else if (errEnded) fail(new Error(`${entry} ended its log without "${text}": ${err}`));
        else return;
        logWaiters.delete(check);
      };
      logWaiters.add(check);
      check();
    });
  const reader = proc.stdout.getReader();
  let out = '';
  let url: string | undefined;
  // A hub's last start-up line is its console line (it may come in a later chunk).
  while (!url || (entry === 'hub/main.ts' && !/^console: /m.test(out))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${entry} exited before listening: ${err}`);
    out += new TextDecoder().decode(value);
    url = /listening on (http:\/\/\S+?)(?:\s|$)/.exec(out)?.[1];
  }
  void (async () => {
    // Keep draining so the child never blocks.
    for (let r = await reader.read(); !r.done; r = await reader.read())
      out += new TextDecoder().decode(r.value);
  })();
  return {
    url,
    dataDir,
    proc,
    alive: () => !exited,
    log: () => err,
    out: () => out,
    waitForLog,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      if (!shared) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
