/**
 * Recovery at start decides per agent: a task the agent says it can resume stays as the crash
 * left it, every other `submitted` or `working` task is failed. The hub resumes its delegations
 * (the executor kept running the job) and a read after the restart still settles them.
 */

import { Database } from 'bun:sqlite';
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { createHub } from '../hub/hub.ts';
import type { Agent } from '../lib/a2a/agent.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { realNodeDefs, startFleet } from './support/fleet.ts';
import { agentNode, msgV1, rpc, startNode, tempDir, testTokens } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

test('an agent keeps the tasks it can resume; the others are failed with the reason', async () => {
  const dataDir = tempDir('lume-a2a-resume-');
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const agent: Agent = {
    handle(ctx) {
      ctx.working();
      if (ctx.text === 'keep') ctx.setMetadata({ keep: true });
    },
    resumes: (task) => task.metadata?.keep === true,
  };
  const first = await startNode(agentNode('keeper', agent), { dataDir });
  const kept = (await rpc(first.url, 'SendMessage', { message: msgV1('keep') })).result.task;
  const lost = (await rpc(first.url, 'SendMessage', { message: msgV1('lose') })).result.task;
  expect([kept.status.state, lost.status.state]).toEqual([
    'TASK_STATE_WORKING',
    'TASK_STATE_WORKING',
  ]);
  await first.stop(); // the tasks stay working on disk, as after a crash

  const second = await startNode(agentNode('keeper', agent), { dataDir });
  cleanup.push(() => second.stop());
  expect((await rpc(second.url, 'GetTask', { id: kept.id })).result.status.state).toBe(
    'TASK_STATE_WORKING',
  );
  const failed = (await rpc(second.url, 'GetTask', { id: lost.id })).result;
  expect(failed.status.state).toBe('TASK_STATE_FAILED');
  expect(failed.status.message.parts[1].data.error.code).toBe('TASK_INTERRUPTED');
  expect(second.log.lines.some((l) => l.includes('tasks interrupted by a restart'))).toBe(true);
  // A second restart changes nothing more: the failed task keeps its first verdict.
  await second.node.store.flush();
  const third = await startNode(agentNode('keeper', agent), { dataDir });
  cleanup.push(() => third.stop());
  expect((await rpc(third.url, 'GetTask', { id: lost.id })).result.status).toEqual(failed.status);
});

test('the hub resumes a delegated task after a restart, and reading it still settles it', async () => {
  const f = await startFleet(await realNodeDefs(['resolve']));
  cleanup.push(() => f.stop());
  const sent = await rpc(f.hubUrl, 'SendMessage', {
    message: {
      ...msgV1(''),
      parts: [
        {
          data: {
            skill: 'task.delegate',
            args: { prompt: 'fleet report', recipe: 'fleet-report' },
          },
        },
      ],
    },
  });
  const task = sent.result.task;
  expect(task.status.state).toBe('TASK_STATE_WORKING');
  await f.hub.node.store.flush();

  // A new hub process on the same data folder (the first one is simply never asked again).
  const log = memoryLog();
  const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
  const again = createHub({
    fleet: f.fleet,
    dataDir: f.dataDir,
    log,
    identity: await loadPeerIdentity(f.dataDir, 'a2a'),
    traceDb: new Database(':memory:', { strict: true }),
    meshStore,
    tokens: testTokens(),
  });
  const server = again.listen(0);
  cleanup.push(async () => {
    await server.stop();
    await meshStore.close();
  });
  let t = (await rpc(server.url, 'GetTask', { id: task.id })).result;
  for (let i = 0; i < 2000 && t.status.state === 'TASK_STATE_WORKING'; i++)
    t = (await rpc(server.url, 'GetTask', { id: task.id })).result;
  expect(t.status.state).toBe('TASK_STATE_COMPLETED');
  expect(t.artifacts[0].name).toBe('job-output');
  expect(log.lines.some((l) => l.includes('tasks interrupted by a restart'))).toBe(true);
});
