/**
 * `bun run fleet` as a user runs it: it checks itself first, one line per check; the hub and the
 * nodes start as separate processes and come up; a node killed from outside is seen down and
 * restarted; SIGTERM stops every process. The data folder and its logs are the fleet user's only
 * (a looser folder from before is tightened), and no log file holds a live console URL. A fleet
 * file naming a missing node file stops it before anything starts.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bunCommand } from './support/bundle.ts';
import { tempDir } from './support/node.ts';
import { freePorts, lineReader, ROOT as root } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dataDir = tempDir('lume-a2a-fleetcli-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test('starts, restarts a killed node, stops everything on SIGTERM', async () => {
  const [hubPort, scannerPort, confPort] = freePorts(3);
  const fleetFile = join(dataDir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
      nodes: [
        { name: 'scanner', port: scannerPort, role: 'scanner', file: 'node/scanner/index.ts' },
        { name: 'conformance', port: confPort, role: 'tck', file: 'node/conformance.ts' },
      ],
    }),
  );
  // As an older version left them: readable by every local user.
  chmodSync(dataDir, 0o755);
  mkdirSync(join(dataDir, 'logs'), { mode: 0o755 });
  writeFileSync(join(dataDir, 'logs', 'a2a.log'), '', { mode: 0o644 });
  const proc = Bun.spawn(bunCommand(['hub/cli/fleet.ts']), {
    cwd: root,
    env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const out = lineReader(proc.stdout);
  await Promise.all([
    out.until(/^a2a up /),
    out.until(/^scanner up /),
    out.until(/^conformance up /),
  ]);
  // The boot self-check came first, one line per check.
  expect(out.lines.slice(0, 4)).toEqual([
    `self-check fleet fleet OK: ${fleetFile}: the hub and 2 node(s) to start`,
    'self-check fleet files OK: 3 source file(s) found',
    `self-check fleet data OK: ${dataDir} is writable`,
    "self-check fleet keys OK: the hub's key pair and the ring of 3 member(s) are loaded",
  ]);
  const card = await (
    await fetch(`http://127.0.0.1:${scannerPort}/.well-known/agent-card.json`)
  ).json();
  expect(card.name).toBe('scanner');
  const fleetView = await (await fetch(`http://127.0.0.1:${hubPort}/api/fleet`)).json();
  expect(fleetView.nodes.map((n: any) => [n.name, n.online])).toEqual([
    ['scanner', true],
    ['conformance', true],
  ]);

  const pid = Number(/pid=(\d+)/.exec(await out.until(/^scanner up /))![1]);
  const mark = out.lines.length;
  process.kill(pid, 'SIGKILL');
  await out.until(/^scanner down /, mark);
  const back = await out.until(/^scanner up .*restarts=1/, mark);
  expect(Number(/pid=(\d+)/.exec(back)![1])).not.toBe(pid);

  const pids = out.lines
    .map((l) => /pid=(\d+)/.exec(l)?.[1])
    .filter(Boolean)
    .map(Number);
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

  // The fleet printed its console URL for its reader; the hub's log file holds none.
  expect(out.lines.some((l) => /^console: http:\/\/\S+\/login\?ticket=ct_/.test(l))).toBe(true);
  const hubLog = readFileSync(join(dataDir, 'logs', 'a2a.log'), 'utf8');
  expect(hubLog).toContain(`hub listening on http://127.0.0.1:${hubPort}`);
  expect(hubLog).toContain('console: bun run console-url prints a sign-in link');
  expect(hubLog).not.toContain('ticket=');
  const mode = (p: string) => statSync(join(dataDir, p)).mode & 0o777;
  expect([mode('.'), mode('logs'), mode('logs/a2a.log'), mode('logs/scanner.log')]).toEqual([
    0o700, 0o700, 0o600, 0o600,
  ]);
}, 30_000);

test('a member whose file is missing fails the self-check: one line says what to do, and nothing starts', async () => {
  const [hubPort, ghostPort] = freePorts(2);
  const dir = tempDir('lume-a2a-fleetcli-');
  try {
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(
      fleetFile,
      JSON.stringify({
        hub: { name: 'a2a', port: hubPort, role: 'hub', file: 'hub/main.ts' },
        nodes: [{ name: 'ghost', port: ghostPort, role: 'nothing', file: 'node/ghost/index.ts' }],
      }),
    );
    const proc = Bun.spawn(bunCommand(['hub/cli/fleet.ts']), {
      cwd: root,
      env: { ...process.env, FLEET_FILE: fleetFile, DATA_DIR: dir },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(await proc.exited).toBe(1);
    const out = await new Response(proc.stdout).text();
    expect(out).toContain(
      `self-check fleet files FAIL: not found: ghost (node/ghost/index.ts) -> fix the file paths in ${fleetFile}`,
    );
    expect(out).not.toContain(' starting ');
    expect(await new Response(proc.stderr).text()).toBe('');
    // Nothing listens on the hub's port: no child was started.
    expect(
      await fetch(`http://127.0.0.1:${hubPort}/healthz`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
