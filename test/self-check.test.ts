/**
 * The boot self-check: a healthy fleet node passes every check; a broken catalog or unreadable
 * data fails loudly (one line per check, saying what to do) and `/readyz` answers 503 naming the
 * check; a real `bun run node --file` process prints the lines and stays up, not ready.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { capability } from '../lib/catalog/capability.ts';
import { Catalog } from '../lib/catalog/catalog.ts';
import { fail } from '../lib/errors/result.ts';
import { loadNode } from '../lib/node/load-node.ts';
import { formatCheck, selfCheck, selfCheckReadiness } from '../lib/node/self-check.ts';
import { FIXTURES, startNode, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('a fleet node as shipped passes: card, catalog, keys, data', async () => {
  const def = await loadNode('node/crm/index.ts', {
    fixturesDir: FIXTURES,
    fleetFile: join(FIXTURES, 'fleet.json'),
  });
  const boot = selfCheckReadiness();
  const n = await startNode(def, { readyChecks: boot.checks });
  try {
    // Before the check has run, /readyz says so.
    expect((await (await fetch(`${n.url}/readyz`)).json()).checks.card).toEqual({
      ok: false,
      detail: 'the boot self-check has not run yet',
    });
    const lines = await selfCheck({
      name: 'crm',
      card: n.node.card(),
      catalog: def.catalog,
      keysLoaded: true,
      dataPaths: def.dataPaths!,
    });
    boot.record(lines);
    expect(lines.map((l) => `${l.name} ${l.status}`)).toEqual([
      'card ok',
      'catalog ok',
      'keys ok',
      'data ok',
    ]);
    // What it says is what it counted: the catalog's capabilities, and the probes that ran.
    expect(formatCheck('crm', lines[1]!)).toBe(
      `self-check crm catalog OK: ${def.catalog.capabilities.length} capabilities; 4 probes answered (the read-only ones without arguments)`,
    );
    const ready = await (await fetch(`${n.url}/readyz`)).json();
    expect([ready.checks.card.ok, ready.checks.catalog.ok, ready.checks.data.ok]).toEqual([
      true,
      true,
      true,
    ]);
  } finally {
    await n.dispose();
  }
});

test('the counts are what was counted, singular or plural: a catalog of 8 with one named probe, and one of 1', async () => {
  const cap = (id: string) =>
    capability({
      id,
      name: id,
      description: 'Answers',
      tags: ['demo'],
      keywords: [],
      readOnly: true,
      args: {},
      run: () => ({ ok: 1 }),
    });
  const eight = new Catalog(Array.from({ length: 8 }, (_, i) => cap(`demo.c${i}`)));
  const [, many] = await selfCheck({ name: 'hub', catalog: eight, probes: ['demo.c3'] });
  expect(formatCheck('hub', many!)).toBe(
    'self-check hub catalog OK: 8 capabilities; 1 probe answered (demo.c3)',
  );
  const boot = selfCheckReadiness();
  const one = new Catalog([cap('demo.only')]);
  const n = await startNode(
    { name: 'single', description: 'One skill', catalog: one },
    { readyChecks: boot.checks },
  );
  try {
    const lines = await selfCheck({
      name: 'single',
      card: n.node.card(),
      catalog: one,
      dataPaths: [FIXTURES],
    });
    expect(lines.map((l) => formatCheck('single', l))).toEqual([
      `self-check single card OK: 1 skill, ${(n.node.card().supportedInterfaces as unknown[]).length} interfaces`,
      'self-check single catalog OK: 1 capability; 1 probe answered (the read-only ones without arguments)',
      'self-check single data OK: 1 path readable',
    ]);
  } finally {
    await n.dispose();
  }
});

test('a broken catalog and unreadable data fail loudly, say what to do, and make /readyz 503', async () => {
  const dir = tempDir('lume-a2a-selfcheck-');
  dirs.push(dir);
  writeFileSync(join(dir, 'broken.json'), '{"half": ');
  const catalog = new Catalog([
    capability({
      id: 'demo.fine',
      name: 'Fine',
      description: 'Works',
      tags: ['demo'],
      keywords: [],
      readOnly: true,
      args: {},
      run: () => ({ ok: 1 }),
    }),
    capability({
      id: 'demo.broken',
      name: 'Broken',
      description: 'Its data is gone',
      tags: ['demo'],
      keywords: [],
      readOnly: true,
      args: {},
      run: () => fail('DATA_MISSING', 'the snapshot is gone'),
    }),
  ]);
  const boot = selfCheckReadiness();
  const n = await startNode(
    { name: 'demo', description: 'A demo node', catalog },
    { readyChecks: boot.checks },
  );
  try {
    const lines = await selfCheck({
      name: 'demo',
      card: n.node.card(),
      catalog,
      keysLoaded: false,
      dataPaths: [join(dir, 'broken.json'), join(dir, 'missing.json')],
    });
    boot.record(lines);
    const printed = lines.map((l) => formatCheck('demo', l));
    expect(printed).toEqual([
      'self-check demo card OK: 2 skills, 4 interfaces',
      'self-check demo catalog FAIL: 1 of 2 probes failed: demo.broken (DATA_MISSING) -> fix the data or code those capabilities read; the node serves the others',
      'self-check demo keys OK: peer channel not configured: no fleet names this node (--join <hub URL> joins one)',
      `self-check demo data FAIL: ${join(dir, 'broken.json')} is not valid JSON; ${join(dir, 'missing.json')} is missing -> restore those files (the fixtures folder of the checkout) or fix their permissions, then restart`,
    ]);
    const res = await fetch(`${n.url}/readyz`);
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.error.code).toBe('NOT_READY');
    expect(body.checks.catalog.detail).toContain('demo.broken (DATA_MISSING)');
    expect(body.checks.data.detail).toContain('is not valid JSON');
    // The node still serves what works.
    expect((await fetch(`${n.url}/healthz`)).status).toBe(200);
  } finally {
    await n.dispose();
  }
});

test('a real node process prints one line per check and stays up, not ready, when its data is unreadable', async () => {
  const dir = tempDir('lume-a2a-selfcheck-');
  dirs.push(dir);
  writeFileSync(join(dir, 'data.json'), 'not json');
  writeFileSync(
    join(dir, 'node.ts'),
    `
import { capability } from '${ROOT}/lib/catalog/capability.ts';
import { defineNode } from '${ROOT}/lib/node/define-node.ts';
import { readFileSync } from 'node:fs';

export default defineNode(() => ({
  name: 'brokendata',
  description: 'Reads a file that is not JSON.',
  dataPaths: ['${join(dir, 'data.json')}'],
  capabilities: [capability({ id: 'broken.read', name: 'Read', description: 'Reads the data', tags: ['demo'], keywords: ['read'], readOnly: true, args: {},
    run: () => JSON.parse(readFileSync('${join(dir, 'data.json')}', 'utf8')) })],
}));
`,
  );
  const proc = Bun.spawn({
    cmd: [
      process.execPath,
      join(ROOT, 'node/main.ts'),
      '--file',
      join(dir, 'node.ts'),
      '--port',
      '0',
    ],
    cwd: dir,
    env: { ...process.env, DATA_DIR: join(dir, 'data') },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const reader = proc.stdout.getReader();
    let out = '';
    while (!out.includes('self-check brokendata data')) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const url = /listening on (\S+)/.exec(out)![1]!;
    expect(out).toContain('self-check brokendata card OK');
    // The capability throws a plain error on unreadable data: a bug, named by the error's kind.
    expect(out).toContain(
      'self-check brokendata catalog FAIL: 1 of 1 probe failed: broken.read (threw SyntaxError)',
    );
    expect(out).toContain(
      `self-check brokendata data FAIL: ${join(dir, 'data.json')} is not valid JSON -> restore those files`,
    );
    // Alone, with no fleet, the peer channel is off: that is no failure.
    expect(out).toContain(
      'self-check brokendata keys OK: peer channel not configured: no fleet names this node (--join <hub URL> joins one)',
    );
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(
      Object.entries((await ready.json()).checks)
        .filter(([, c]: any) => !c.ok)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['catalog', 'data']);
  } finally {
    proc.kill();
    await proc.exited;
  }
});
