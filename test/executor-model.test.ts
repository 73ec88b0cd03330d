/**
 * The `model` recipe against a stand-in OpenAI-compatible endpoint on port 0: present only when
 * configured, takes prompts no other recipe matches, stores the answer as the output, fails with
 * the endpoint's status, cancels an unanswered call, and never stores or logs the key.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startExecutor, type ExecutorNode } from './support/executor.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const KEY = 'sk-test-DO-NOT-STORE-5f2c';
const seen: { auth: string | null; body: any }[] = [];
let hold: () => void = () => {};
const server = Bun.serve({
  port: 0,
  async fetch(req) {
    const body = await req.json();
    seen.push({ auth: req.headers.get('authorization'), body });
    const prompt = String(body.messages?.[0]?.content ?? '');
    if (new URL(req.url).pathname !== '/v1/chat/completions')
      return new Response('no', { status: 404 });
    if (prompt.includes('fail')) return new Response('{"error":"boom"}', { status: 500 });
    // Unanswered until the test lets go (or the caller aborts).
    if (prompt.includes('stall')) await new Promise<void>((r) => (hold = r));
    return Response.json({
      choices: [{ message: { role: 'assistant', content: `answer to: ${prompt}` } }],
    });
  },
});
let x: ExecutorNode;
beforeAll(async () => {
  x = await startExecutor({
    model: { baseUrl: `${server.url}v1/`, apiKey: KEY, model: 'tiny-model' },
  });
});
afterAll(async () => {
  hold();
  await x.stop();
  server.stop(true);
  rmSync(x.dataDir, { recursive: true, force: true });
});
const done = (j: { state: string }) => j.state !== 'running';

test('exec.submit lists the model recipe; a prompt no keyword matches goes to the model', async () => {
  const caps = await (await fetch(`${x.node.url}/capabilities`)).json();
  expect(
    caps.capabilities.find((c: any) => c.id === 'exec.submit').args.recipe.description,
  ).toEndWith('demo, slow, hang, flood, broken, echo, printenv, model');
  const sub = await x.ok('exec.submit', { prompt: 'a haiku about queues' });
  expect(sub.recipe).toBe('model');
  const job = await x.waitFor(sub.job_id, done);
  expect([job.state, job.pid, job.exitCode, job.output]).toEqual([
    'succeeded',
    null,
    0,
    'answer to: a haiku about queues',
  ]);
  expect(seen.at(-1)).toEqual({
    auth: `Bearer ${KEY}`,
    body: { model: 'tiny-model', messages: [{ role: 'user', content: 'a haiku about queues' }] },
  });
  // Keyword recipes still win where they match.
  expect((await x.ok('exec.submit', { prompt: 'fleet report' })).recipe).toBe('fleet-report');
});

test('an endpoint error fails the job with the status; cancel ends an unanswered call', async () => {
  const failed = await x.waitFor(
    (await x.ok('exec.submit', { prompt: 'please fail', recipe: 'model' })).job_id,
    done,
  );
  expect([failed.state, failed.error]).toEqual(['failed', 'model endpoint answered HTTP 500']);
  const { job_id } = await x.ok('exec.submit', { prompt: 'stall', recipe: 'model' });
  for (let i = 0; i < 1000 && !seen.some((s) => s.body.messages[0].content === 'stall'); i++)
    await x.status(job_id);
  expect((await x.ok('exec.cancel', { job_id })).job.state).toBe('canceled');
});

test('the key is in no job record and no log line', async () => {
  const records = readdirSync(x.jobsDir).map((f) => readFileSync(join(x.jobsDir, f), 'utf8'));
  expect(records.length).toBeGreaterThan(2);
  expect(records.filter((r) => r.includes(KEY))).toEqual([]);
  expect(x.node.log.lines.filter((l) => l.includes(KEY))).toEqual([]);
});

test('a model name and earlier turns reach the model; a malformed context or model name is refused', async () => {
  const context = JSON.stringify([{ prompt: 'first', output: 'one' }]);
  const sub = await x.ok('exec.submit', { prompt: 'second', model: 'other-model', context });
  expect(sub.recipe).toBe('model');
  await x.waitFor(sub.job_id, done);
  expect(seen.at(-1)!.body).toEqual({
    model: 'other-model',
    messages: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'second' },
    ],
  });
  const codes = await Promise.all([
    x.call('exec.submit', { prompt: 'x', context: '{"not":"a list"}' }),
    x.call('exec.submit', { prompt: 'x', context: 'not json' }),
    x.call('exec.submit', { prompt: 'x', model: 'bad model name' }),
    x.call('exec.submit', { prompt: 'fleet report', recipe: 'echo', model: 'm' }),
  ]);
  expect(codes.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual([
    'BAD_CONTEXT',
    'BAD_CONTEXT',
    'BAD_MODEL',
    'MODEL_NOT_APPLICABLE',
  ]);
});
