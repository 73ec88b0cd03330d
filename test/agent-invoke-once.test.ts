/**
 * The keyword agent invokes a capability once per turn: its arguments are checked once (a refusal
 * is the question the caller sees, saying what was wrong with the call), it runs once, and its
 * summary is computed once, guarded: a summarizer that throws leaves the answer's default line.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog, type Capability } from '../lib/catalog/catalog.ts';
import { rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

const calls = { run: 0, summarize: 0, checks: 0 };

const counted: Capability = {
  id: 'count.word',
  name: 'Counted',
  description: 'Counts its calls',
  tags: ['test'],
  keywords: ['counted'],
  readOnly: true,
  args: { word: { type: 'string', description: 'a word', required: true } },
  run: (args) => (calls.run++, { word: args.word }),
  summarize: (r) => (calls.summarize++, `said ${(r as { word: string }).word}`),
};
const fragile: Capability = {
  ...counted,
  id: 'count.fragile',
  name: 'Fragile',
  keywords: ['fragile'],
  summarize: () => {
    calls.summarize++;
    throw new Error('summary bug');
  },
};

/** The catalog, its argument checks counted too. */
class CountingCatalog extends Catalog {
  override checkArgs(cap: Capability, args: unknown) {
    calls.checks++;
    return super.checkArgs(cap, args);
  }
}

let n: TestNode;
beforeAll(async () => {
  n = await startNode({
    name: 'counted',
    description: 'Counts capability calls',
    catalog: new CountingCatalog([counted, fragile]),
  });
});
afterAll(() => n?.dispose());

const send = (skill: string, args: unknown) =>
  rpc(n.url, 'SendMessage', {
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill, args } }],
    },
  }).then((r) => r.result.task);
const texts = (task: any) =>
  task.artifacts[0].parts.filter((p: any) => p.text !== undefined).map((p: any) => p.text);

test('a turn checks the arguments once, runs the capability once and summarizes once', async () => {
  Object.assign(calls, { run: 0, summarize: 0, checks: 0 });
  const task = await send('count.word', { word: 'hi' });
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(texts(task)).toEqual(['said hi']);
  expect(calls).toEqual({ run: 1, summarize: 1, checks: 1 });
});

test('arguments that do not check are the question the caller sees, and nothing runs', async () => {
  Object.assign(calls, { run: 0, summarize: 0, checks: 0 });
  const task = await send('count.word', { word: 7 });
  expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(task.status.message.parts[0].text).toStartWith(
    'count.word: argument word must be a string.',
  );
  expect(calls).toEqual({ run: 0, summarize: 0, checks: 1 });
});

test('a summarizer that throws leaves the default line; the task completes with the result', async () => {
  Object.assign(calls, { run: 0, summarize: 0, checks: 0 });
  const task = await send('count.fragile', { word: 'hi' });
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(task.artifacts[0].parts[0].data).toEqual({ word: 'hi' });
  expect(texts(task)).toEqual(['Fragile: done']);
  expect(calls).toEqual({ run: 1, summarize: 1, checks: 1 });
});
