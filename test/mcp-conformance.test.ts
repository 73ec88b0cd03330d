/**
 * MCP conformance, as the project proves it: the conformance node runs as a real process on a
 * free port and both lines of the official suite (@modelcontextprotocol/conformance) run against
 * its `/mcp` — the stable one (MCP 2025-11-25, every scenario) and the next one (MCP 2026-07-28's
 * requirements, the tasks extension's scenarios included). Each must report zero failures, over
 * the number of scenarios and checks docs/conformance.md states.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { resolve } from 'node:path';
import { startNodeProcess, type NodeProcess } from './support/node-process.ts';

setDefaultTimeout(600_000); // per file (Bun scopes it so): each suite runs dozens of scenarios against a real process

const ROOT = resolve(import.meta.dir, '..');
let node: NodeProcess;

beforeAll(async () => {
  node = await startNodeProcess();
});
afterAll(async () => {
  await node?.stop();
});

interface Run {
  scenarios: { name: string; passed: number; failed: number; ok: boolean }[];
  total: { passed: number; failed: number };
  output: string;
}

/** Runs one line of the suite against the node and reads its summary lines. */
async function suite(pkg: string, args: string[]): Promise<Run> {
  const proc = Bun.spawn(
    [
      process.execPath,
      '--bun',
      `node_modules/${pkg}/dist/index.js`,
      'server',
      '--url',
      `${node.url}/mcp`,
      ...args,
    ],
    { cwd: ROOT, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  );
  const [output, errors] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  await proc.exited;
  const scenarios = [...output.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed$/gm)].map(
    (m) => ({ name: m[2]!, ok: m[1] === '✓', passed: Number(m[3]), failed: Number(m[4]) }),
  );
  const total = /^Total: (\d+) passed, (\d+) failed$/m.exec(output);
  if (!total)
    throw new Error(`no summary from ${pkg}:\n${output.slice(-2000)}\n${errors.slice(-2000)}`);
  return { scenarios, total: { passed: Number(total[1]), failed: Number(total[2]) }, output };
}

const failing = (r: Run) => r.scenarios.filter((s) => !s.ok || s.failed > 0).map((s) => s.name);

describe('the official MCP conformance suite against the conformance node', () => {
  test('the stable line (MCP 2025-11-25, --suite all): 32 scenarios, 43 checks, none failing', async () => {
    const r = await suite('mcp-conformance', ['--suite', 'all']);
    expect(failing(r)).toEqual([]);
    expect(r.total).toEqual({ passed: 43, failed: 0 });
    expect(r.scenarios.length).toBe(32);
  });

  test('the next line (MCP 2026-07-28 requirements): 50 scenarios, 193 checks, none failing, the tasks extension included', async () => {
    const r = await suite('mcp-conformance-next', ['--requirements', '2026-07-28']);
    expect(failing(r)).toEqual([]);
    expect(r.total).toEqual({ passed: 193, failed: 0 });
    expect(r.scenarios.length).toBe(50);
    const tasks = r.scenarios.filter((s) => s.name.startsWith('tasks-'));
    expect(tasks.map((s) => s.name).sort()).toEqual([
      'tasks-capability-negotiation',
      'tasks-dispatch-and-envelope',
      'tasks-lifecycle',
      'tasks-mrtr-composition',
      'tasks-mrtr-input',
      'tasks-request-headers',
      'tasks-request-state-removal',
      'tasks-required-task-error',
      'tasks-status-notifications',
      'tasks-wire-fields',
    ]);
    expect(tasks.reduce((n, s) => n + s.passed, 0)).toBe(44);
  });
});
