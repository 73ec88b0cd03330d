/**
 * task.delegate's arguments end to end, on a fleet on port 0 with a real model server: `executor`
 * (resolve by default, any node offering exec.*, refusals for unknown names and non-executors),
 * `prompt` (required, bounded), `model` (reaches the model recipe; refused for a process recipe),
 * `taskId` (continues an earlier delegation with its turns; refusals for unknown and running
 * tasks), and a continuation that adds to a waiting request instead of replacing its prompt.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadNode } from '../lib/node/load-node.ts';
import { builderNode } from './support/builder-node.ts';
import { startFleet, realNodeDefs, type RunningFleet } from './support/fleet.ts';
import { lastUser, startModelServer, type ModelServer } from './support/model-server.ts';
import { FIXTURES, msgV1, rpc, tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
let model: ModelServer;
const resolveData = tempDir('lume-a2a-node-');
beforeAll(async () => {
  model = startModelServer((b) => ({
    text: `[${b.model}] ${lastUser(b)} (${b.messages.length} messages)`,
  }));
  const fleetFile = resolve(FIXTURES, 'fleet.json');
  const resolveDef = await loadNode('node/resolve/index.ts', {
    fixturesDir: FIXTURES,
    fleetFile,
    dataDir: resolveData,
    model: { baseUrl: model.baseUrl, model: 'base-model', apiKey: 'sk-delegate-test' },
  });
  f = await startFleet([...(await realNodeDefs(['scanner'])), resolveDef, builderNode()]);
});
afterAll(async () => {
  await f.stop();
  model.stop();
  rmSync(resolveData, { recursive: true, force: true });
});

const delegate = async (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  (
    await rpc(f.hubUrl, 'SendMessage', {
      message: { ...msgV1(''), ...extra, parts: [{ data: { skill: 'task.delegate', args } }] },
    })
  ).result.task;
const errorOf = (t: any) => t.status.message.parts.find((p: any) => p.data?.error)?.data.error;

async function settled(id: string): Promise<any> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const t = (await rpc(f.hubUrl, 'GetTask', { id })).result;
    if (t.status.state !== 'TASK_STATE_WORKING') return t;
  }
  throw new Error(`task ${id} still working`);
}

describe('executor', () => {
  test('defaults to resolve; another node offering exec.* runs the job when named', async () => {
    expect((await delegate({ prompt: 'fleet report' })).metadata.delegation.executor).toBe(
      'resolve',
    );
    const t = await delegate({ prompt: 'the release', executor: 'builder' });
    expect([t.status.state, t.metadata.delegation.executor, t.metadata.delegation.recipe]).toEqual([
      'TASK_STATE_WORKING',
      'builder',
      'build',
    ]);
    const done = await settled(t.id);
    expect(done.artifacts[0].parts[0].text).toBe('built: the release');
  });

  test('an unknown name and a node without exec.* are refused with a code, and nothing is submitted', async () => {
    const before = (
      await (await fetch(`${f.hubUrl}/api/trace?capability=exec.submit&limit=500`)).json()
    ).records.length;
    const unknown = await delegate({ prompt: 'fleet report', executor: 'lan-nope' });
    expect(unknown.status.state).toBe('TASK_STATE_REJECTED');
    expect(errorOf(unknown).code).toBe('DELEGATE_UNKNOWN_EXECUTOR');
    const scanner = await delegate({ prompt: 'fleet report', executor: 'scanner' });
    expect(scanner.status.state).toBe('TASK_STATE_REJECTED');
    expect(errorOf(scanner)).toMatchObject({ code: 'DELEGATE_NOT_EXECUTOR', field: 'executor' });
    expect(errorOf(scanner).message).toContain('executors: resolve, builder');
    // The hub itself is no executor either.
    expect(errorOf(await delegate({ prompt: 'x', executor: 'a2a' })).code).toBe(
      'DELEGATE_UNKNOWN_EXECUTOR',
    );
    const after = (
      await (await fetch(`${f.hubUrl}/api/trace?capability=exec.submit&limit=500`)).json()
    ).records.length;
    expect(after).toBe(before);
  });
});

describe('prompt', () => {
  test('missing or blank waits for input; a wrong type or an over-long value is BAD_ARGS', async () => {
    expect((await delegate({})).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await delegate({ prompt: '   ' })).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const typed = await delegate({ prompt: 'fleet report', executor: 7 });
    expect([typed.status.state, errorOf(typed).code]).toEqual(['TASK_STATE_REJECTED', 'BAD_ARGS']);
    const long = await delegate({ prompt: 'x'.repeat(4001) });
    expect([long.status.state, errorOf(long).code]).toEqual(['TASK_STATE_REJECTED', 'BAD_ARGS']);
  });
});

describe('model', () => {
  test('reaches the model recipe as the model name; the key never shows', async () => {
    const t = await delegate({ prompt: 'a haiku about queues', model: 'tiny-1' });
    expect([t.metadata.delegation.recipe, t.metadata.delegation.model]).toEqual([
      'model',
      'tiny-1',
    ]);
    const done = await settled(t.id);
    expect(done.artifacts[0].parts[0].text).toBe('[tiny-1] a haiku about queues (1 messages)');
    expect(model.requests.at(-1)!.auth).toBe('Bearer sk-delegate-test');
    expect(JSON.stringify(done)).not.toContain('sk-delegate-test');
  });

  test('with a process recipe it is refused by the executor; a malformed name too', async () => {
    const t = await delegate({ prompt: 'fleet report', recipe: 'fleet-report', model: 'tiny-1' });
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.parts[0].text).toContain('MODEL_NOT_APPLICABLE');
    const bad = await delegate({ prompt: 'hello', model: '../../etc' });
    expect(bad.status.message.parts[0].text).toContain('BAD_MODEL');
  });
});

describe('taskId', () => {
  test('continues a settled delegation: the earlier prompt and answer go with the new job, which keeps its own prompt', async () => {
    const first = await settled((await delegate({ prompt: 'name a colour', recipe: 'model' })).id);
    expect(first.artifacts[0].parts[0].text).toBe('[base-model] name a colour (1 messages)');
    const next = await delegate({ prompt: 'and another one', taskId: first.id });
    const d = next.metadata.delegation;
    expect([d.continues, d.prompt, d.executor, d.turns.length, d.turns[0].prompt]).toEqual([
      first.id,
      'and another one',
      'resolve',
      1,
      'name a colour',
    ]);
    const done = await settled(next.id);
    // The model saw the earlier turn (user, assistant) before the new prompt.
    expect(done.artifacts[0].parts[0].text).toBe('[base-model] and another one (3 messages)');
    const sent = model.requests.at(-1)!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[1]!.content).toBe('[base-model] name a colour (1 messages)');
    // A chain keeps growing; the earlier task is unchanged.
    const third = await delegate({ prompt: 'a third', taskId: next.id });
    expect(third.metadata.delegation.turns.map((t: any) => t.prompt)).toEqual([
      'name a colour',
      'and another one',
    ]);
    expect(
      (await rpc(f.hubUrl, 'GetTask', { id: first.id })).result.metadata.delegation.prompt,
    ).toBe('name a colour');
  });

  test('an unknown task, a task that is no delegation and a running one are refused with codes', async () => {
    const missing = await delegate({
      prompt: 'go on',
      taskId: '00000000-0000-4000-8000-000000000000',
    });
    expect([missing.status.state, errorOf(missing).code]).toEqual([
      'TASK_STATE_REJECTED',
      'DELEGATE_UNKNOWN_TASK',
    ]);
    expect(errorOf(await delegate({ prompt: 'go on', taskId: '../../etc/passwd' })).code).toBe(
      'DELEGATE_UNKNOWN_TASK',
    );
    const question = (
      await rpc(f.hubUrl, 'SendMessage', { message: msgV1('which sectors moved most') })
    ).result.task;
    expect(errorOf(await delegate({ prompt: 'go on', taskId: question.id })).code).toBe(
      'DELEGATE_UNKNOWN_TASK',
    );
    const running = await delegate({ prompt: 'run the long demo', recipe: 'demo' });
    const refused = await delegate({ prompt: 'go on', taskId: running.id });
    expect([refused.status.state, errorOf(refused).code]).toEqual([
      'TASK_STATE_REJECTED',
      'DELEGATE_TASK_ACTIVE',
    ]);
    await rpc(f.hubUrl, 'CancelTask', { id: running.id });
  });
});

describe('continuing a task in place', () => {
  test('a waiting request keeps its prompt: the continuation is added to it, and both messages stay in the history', async () => {
    const waiting = await delegate({ prompt: 'a haiku', recipe: 'no-such-recipe' });
    expect(waiting.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const cont = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: {
          ...msgV1(''),
          taskId: waiting.id,
          parts: [
            { data: { skill: 'task.delegate', args: { prompt: 'about queues', recipe: 'model' } } },
          ],
        },
      })
    ).result.task;
    expect(cont.status.state).toBe('TASK_STATE_WORKING');
    expect(cont.metadata.delegation.prompt).toBe('a haiku\n\nabout queues');
    expect(cont.history.filter((m: any) => m.role === 'ROLE_USER').length).toBe(2);
    // A text continuation is added the same way.
    const waiting2 = await delegate({ prompt: 'a limerick', recipe: 'nope' });
    const cont2 = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: { ...msgV1('about tests'), taskId: waiting2.id },
      })
    ).result.task;
    expect(cont2.metadata.delegationRequest.prompt).toBe('a limerick\n\nabout tests');
  });

  test('a task that already has a job takes no second one in its place', async () => {
    const running = await delegate({ prompt: 'run the long demo', recipe: 'demo' });
    const jobId = running.metadata.delegation.job_id;
    const again = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: {
          ...msgV1(''),
          taskId: running.id,
          parts: [{ data: { skill: 'task.delegate', args: { prompt: 'fleet report' } } }],
        },
      })
    ).result.task;
    expect(again.status.state).toBe('TASK_STATE_WORKING');
    expect(errorOf(again).code).toBe('DELEGATE_TASK_ACTIVE');
    expect(again.metadata.delegation.job_id).toBe(jobId);
    // A text message to it is not an Ask Agent question either.
    const text = (
      await rpc(f.hubUrl, 'SendMessage', {
        message: { ...msgV1('which sectors moved'), taskId: running.id },
      })
    ).result.task;
    expect([text.status.state, text.metadata.delegation.job_id]).toEqual([
      'TASK_STATE_WORKING',
      jobId,
    ]);
    await rpc(f.hubUrl, 'CancelTask', { id: running.id });
  });
});
