/**
 * `bun run fleet` as a user runs it: the hub and the nodes start as separate processes and come
 * up; a node killed from outside is seen down and restarted; SIGTERM stops every process.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const root = resolve(import.meta.dir, '..');
const dataDir = tempDir('lume-a2a-fleetcli-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Ports the OS says are free right now. */
function freePorts(n: number): number[] {
  const servers = Array.from({ length: n }, () => Bun.serve({ port: 0, fetch: () => new Response() }));
  const ports = servers.map((s) => s.port!);
  servers.forEach((s) => s.stop(true));
  return ports;
}

/** Reads stdout line by line; `until` resolves with the first line matching. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let buf = '';
  (async () => {
    const dec = new TextDecoder();
    const reader = stream.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buf += dec.decode(r.value);
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        for (const w of [...waiters]) if (w.re.test(line)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(line));
      }
    }
  })();
  return {
    lines,
    until(re: RegExp, from = 0): Promise<string> {
      const seen = lines.slice(from).find((l) => re.test(l));
      return seen ? Promise.resolve(seen) : new Promise((r) => waiters.push({ re, resolve: r }));
    },
  };
}

test('starts, restarts a killed node, stops everything on SIGTERM', async () => {
  const [hubPort, scannerPort, confPort] = freePorts(3);
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(fleetFile, JSON.stringify({
    hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
    nodes: [
      { name: 'scanner', port: scannerPort, role: 'scanner', file: 'node/scanner/index.ts' },
      { name: 'conformance', port: confPort, role: 'tck', file: 'node/conformance.ts' },
    ],
  }));
  const proc = Bun.spawn(['bun', 'hub/cli/fleet.ts'], { cwd: root, env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'inherit' });
  const out = lineReader(proc.stdout);
  await Promise.all([out.until(/^a2a up /), out.until(/^scanner up /), out.until(/^conformance up /)]);
  const card = await (await fetch(`http://127.0.0.1:${scannerPort}/.well-known/agent-card.json`)).json();
  expect(card.name).toBe('scanner');
  const fleetView = await (await fetch(`http://127.0.0.1:${hubPort}/api/fleet`)).json();
  expect(fleetView.nodes.map((n: any) => [n.name, n.online])).toEqual([['scanner', true], ['conformance', true]]);

  const pid = Number(/pid=(\d+)/.exec(await out.until(/^scanner up /))![1]);
  const mark = out.lines.length;
  process.kill(pid, 'SIGKILL');
  await out.until(/^scanner down /, mark);
  const back = await out.until(/^scanner up .*restarts=1/, mark);
  expect(Number(/pid=(\d+)/.exec(back)![1])).not.toBe(pid);

  const pids = out.lines.map((l) => /pid=(\d+)/.exec(l)?.[1]).filter(Boolean).map(Number);
  proc.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
  const alive = pids.filter((p) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  });
  expect(alive).toEqual([]);
  expect(out.lines).toContain('fleet stopped');
}, 30_000);
