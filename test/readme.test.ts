/**
 * The README's curl examples, run as written (only the port changes) against a scanner node on
 * port 0, so the documentation cannot drift from what the node answers; and its second copy of a
 * node beside the fleet (its own DATA_DIR), as real processes.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, startNode, tempDir, type TestNode } from './support/node.ts';
import { freePorts, lineReader, startNodeProcess, writeFleetFile } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const readme = await Bun.file(join(import.meta.dir, '../README.md')).text();
const curlExamples = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.split('\n'))
  .filter((line) => line.startsWith('curl ') && line.includes('127.0.0.1:4102'));

let node: TestNode;
beforeAll(async () => {
  node = await startNode(scanner({ fixturesDir: FIXTURES }));
});
afterAll(() => node.dispose());

async function run(line: string, env: Record<string, string>): Promise<string> {
  const command = line.replaceAll('http://127.0.0.1:4102', node.url);
  const proc = Bun.spawn(['sh', '-c', command], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  return out;
}

test('the README has the card, message/send, SendMessage, tasks/get and streaming examples', () => {
  expect(curlExamples.map((l) => /"method":"([^"]+)"/.exec(l)?.[1] ?? 'card')).toEqual([
    'card',
    'message/send',
    'SendMessage',
    'tasks/get',
    'SendStreamingMessage',
  ]);
});

test('each README curl example gets the answer the README describes', async () => {
  const [card, send03, send1, get, stream] = curlExamples;
  expect(JSON.parse(await run(card!, {})).name).toBe('scanner');

  const first = JSON.parse(await run(send03!, {}));
  expect(first.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  expect(first.result.artifacts[0].name).toBe('sector.movement');

  const second = JSON.parse(await run(send1!, {}));
  expect(second.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(second.result.task.artifacts[0].parts[0].data.stock.name).toBe('SMIC');

  const got = JSON.parse(await run(get!, { TASK_ID: first.result.id }));
  expect([got.result.id, got.result.status.state]).toEqual([first.result.id, 'completed']);

  const blocks = (await run(stream!, {})).split('\n\n').filter((f) => f.includes('data: '));
  // Each event names its position: `id: <taskId>:<generation>`, then its `data:`.
  expect(blocks.every((f) => /^id: [0-9a-f-]{36}:\d+\ndata: /.test(f))).toBe(true);
  const frames = blocks.map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)));
  expect(frames.map((f) => Object.keys(f.result)[0])).toEqual([
    'task',
    'statusUpdate',
    'artifactUpdate',
    'statusUpdate',
  ]);
  expect(frames.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
});

test("the README's second copy of a node: the fleet's data folder is refused, its own serves", async () => {
  const line = readme
    .split('\n')
    .find((l) => l.startsWith('DATA_DIR=./data-2 bun run node --name scanner'))!
    .replace(/\s+#.*$/, '');
  const dir = tempDir('lume-a2a-readme-');
  const fleetFile = writeFleetFile(dir, 0, [
    { name: 'scanner', port: freePorts(1)[0]!, file: 'node/scanner/index.ts' },
  ]);
  const fleets = await startNodeProcess('scanner', {
    FLEET_FILE: fleetFile,
    DATA_DIR: join(dir, 'data'),
  });
  const sh = (command: string, env: Record<string, string>) => {
    const proc = Bun.spawn(['sh', '-c', `exec ${command}`], {
      cwd: resolve(import.meta.dir, '..'),
      env: { ...process.env, FLEET_FILE: fleetFile, ...env },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    return { proc, out: lineReader(proc.stdout), err: lineReader(proc.stderr) };
  };
  try {
    // The same DATA_DIR as the running one: one line naming its pid, exit 75.
    const same = sh('bun run node --name scanner --port 0', { DATA_DIR: join(dir, 'data') });
    expect(await same.proc.exited).toBe(75);
    await same.err.done;
    expect(same.err.lines.join('\n')).toContain(String(fleets.proc.pid));
    // The README's line, its folder under the test's temporary one.
    const [, assigned, command] = /^DATA_DIR=(\S+) (.*)$/.exec(line)!;
    expect(assigned).toBe('./data-2');
    const copy = sh(command!, { DATA_DIR: join(dir, 'data-2') });
    try {
      const url = /listening on (\S+)/.exec(await copy.out.until(/listening on /))![1]!;
      expect(url).not.toBe(fleets.url);
      expect((await (await fetch(`${url}/.well-known/agent-card.json`)).json()).name).toBe(
        'scanner',
      );
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    } finally {
      copy.proc.kill();
      await copy.proc.exited;
    }
  } finally {
    fleets.proc.kill();
    await fleets.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
