/**
 * @module hub/cli/new-node — `bun run new-node <name> [--dir <folder>]`: writes a working node file
 * with one capability and its test. In this repository: `node/<name>.ts` and
 * `test/<name>.test.ts`, importing lib/. With `--dir` (an app that installed the package):
 * `<dir>/<name>.ts` and `<dir>/<name>.test.ts`, importing `lume-a2a`. Never overwrites a file.
 */

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const root = resolve(import.meta.dir, '../..');
const { values, positionals } = parseArgs({
  options: { dir: { type: 'string' } },
  allowPositionals: true,
});
const name = positionals[0];
if (positionals.length !== 1 || !name || !NAME.test(name)) {
  console.error(
    'usage: bun run new-node <name> [--dir <folder>]   (name: lower case letters, digits, dashes; starts with a letter)',
  );
  process.exit(2);
}

const inApp = values.dir !== undefined;
const nodeFile = inApp ? resolve(values.dir!, `${name}.ts`) : join(root, 'node', `${name}.ts`);
const testFile = inApp
  ? resolve(values.dir!, `${name}.test.ts`)
  : join(root, 'test', `${name}.test.ts`);
for (const f of [nodeFile, testFile]) {
  if (existsSync(f)) {
    console.error(`${relative(process.cwd(), f)} exists; new-node never overwrites a file`);
    process.exit(1);
  }
}
const kit = inApp
  ? { node: 'lume-a2a/node', client: 'lume-a2a/client' }
  : { node: '../lib/kit/node.ts', client: '../lib/kit/client.ts' };
const nodeImport = inApp ? `./${name}` : `../node/${name}.ts`;
const id = `${name}.greet`;

const nodeText = `/**
 * @module ${name} — a fleet node. Describe in one sentence what it knows or does.
 */

import { capability, defineNode } from '${kit.node}';

export default defineNode(() => ({
  name: '${name}',
  description: 'Greets whoever asks. A text question picks the tool by keyword.',
  capabilities: [
    capability({
      id: '${id}',
      name: 'Greet',
      description: 'A greeting for the name given.',
      tags: ['example'],
      keywords: ['hello', 'greet'],
      readOnly: true,
      args: { who: { type: 'string', description: 'Who to greet', maxLength: 100 } },
      run: ({ who = 'world' }) => ({ greeting: \`Hello, \${who}!\` }),
      summarize: (r) => r.greeting,
    }),
  ],
}));
`;

const testText = `/**
 * The ${name} node served on a free port: its card lists its capability, and an A2A call answers.
 */

import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA2AClient } from '${kit.client}';
import { serveNode } from '${kit.node}';
import node from '${nodeImport}';

const dataDir = mkdtempSync(join(tmpdir(), '${name}-test-'));
const running = await serveNode(node, { port: 0, dataDir });
afterAll(async () => {
  await running.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the card lists the capability', async () => {
  const card = await createA2AClient({ url: running.url }).card();
  expect(card.ok && (card.result.skills as { id: string }[]).map((s) => s.id)).toEqual(['${id}']);
});

test('a call answers with data', async () => {
  const r = await createA2AClient({ url: running.url }).call('${id}', { who: 'Ada' });
  expect(r).toMatchObject({ ok: true, result: { greeting: 'Hello, Ada!' } });
});
`;

for (const f of [nodeFile, testFile]) mkdirSync(resolve(f, '..'), { recursive: true });
writeFileSync(nodeFile, nodeText, { flag: 'wx' });
writeFileSync(testFile, testText, { flag: 'wx' });
console.log(`wrote ${relative(process.cwd(), nodeFile)} and ${relative(process.cwd(), testFile)}`);
