/**
 * @module hub/cli/new-node — `bun run new-node <name> [--dir <folder>]`: writes a working node with
 * one capability, laid out as every node of the fleet is, and its test. In this repository:
 * `node/<name>/index.ts` (the declarations), `node/<name>/queries.ts` (what it computes) and
 * `test/<name>.test.ts` (following the suite's rules: its own timeout, a free port, its temporary
 * folder removed), importing lib/kit. With `--dir` (an app that installed the package): the same
 * under `<dir>/`, importing `lume-a2a`. Never overwrites a file.
 */

import { PRINCIPAL_NAME } from '../../lib/auth/principal.ts';
import { PROJECT_ROOT } from '../../lib/project-root.ts';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { exitOnHelp } from './help.ts';

const USAGE =
  'usage: bun run new-node <name> [--dir <folder>]   (name: lower case letters, digits, dashes; starts with a letter)';
exitOnHelp(USAGE);
const root = PROJECT_ROOT;
let parsed: ReturnType<typeof parseNewNodeArgs>;
try {
  parsed = parseNewNodeArgs();
} catch (e) {
  // An unknown flag: the reason and the usage, not a stack trace.
  console.error(`new-node: ${(e as Error).message}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
const name = positionals[0];
if (positionals.length !== 1 || !name || !PRINCIPAL_NAME.test(name)) {
  console.error(USAGE);
  process.exit(2);
}

function parseNewNodeArgs() {
  return parseArgs({ options: { dir: { type: 'string' } }, allowPositionals: true });
}

const inApp = values.dir !== undefined;
const base = inApp ? resolve(values.dir!) : root;
const nodeDir = inApp ? join(base, name) : join(base, 'node', name);
const indexFile = join(nodeDir, 'index.ts');
const queriesFile = join(nodeDir, 'queries.ts');
const testFile = inApp ? join(base, `${name}.test.ts`) : join(base, 'test', `${name}.test.ts`);
for (const f of [indexFile, queriesFile, testFile]) {
  if (existsSync(f)) {
    console.error(`${relative(process.cwd(), f)} exists; new-node never overwrites a file`);
    process.exit(1);
  }
}
const kit = inApp
  ? { node: 'lume-a2a/node', client: 'lume-a2a/client', fromTest: `./${name}` }
  : { node: '../../lib/kit/node.ts', client: '../lib/kit/client.ts', fromTest: `../node/${name}` };
const testKitNode = inApp ? 'lume-a2a/node' : '../lib/kit/node.ts';
const id = `${name}.greet`;
/** Beside the node's index.ts (kept out of this file's own import list). */
const queriesImport = './queries.ts';
const where = inApp ? name : `node/${name}`;

const indexText = `/**
 * @module ${where} — a fleet node. Describe in one sentence what it knows or does.
 */

import { capability, defineNode } from '${kit.node}';
import { greeting } from '${queriesImport}';

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
      run: ({ who = 'world' }) => greeting(who),
      summarize: (r) => r.greeting,
    }),
  ],
}));
`;

const queriesText = `/**
 * @module ${where}/queries — what the ${name} node computes, apart from its declarations so a test
 * calls it without a server.
 */

export function greeting(who: string): { greeting: string } {
  return { greeting: \`Hello, \${who}!\` };
}
`;

const testText = `/**
 * The ${name} node: its query answers without a server; served on a free port, its card lists its
 * capability and an A2A call answers.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA2AClient } from '${kit.client}';
import { serveNode } from '${testKitNode}';
import node from '${kit.fromTest}/index.ts';
import { greeting } from '${kit.fromTest}/queries.ts';

setDefaultTimeout(20_000); // real servers are slow on a busy machine

const dataDir = mkdtempSync(join(tmpdir(), '${name}-test-'));
const running = await serveNode(node, { port: 0, dataDir });
afterAll(async () => {
  await running.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the query answers without a server', () => {
  expect(greeting('Ada')).toEqual({ greeting: 'Hello, Ada!' });
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

for (const f of [indexFile, testFile]) mkdirSync(resolve(f, '..'), { recursive: true });
writeFileSync(indexFile, indexText, { flag: 'wx' });
writeFileSync(queriesFile, queriesText, { flag: 'wx' });
writeFileSync(testFile, testText, { flag: 'wx' });
const shown = (f: string) => relative(process.cwd(), f);
console.log(`wrote ${shown(indexFile)}, ${shown(queriesFile)} and ${shown(testFile)}`);
