/**
 * Crash recovery with real processes: a node killed with -9 while a task works comes back with
 * that task failed (on the JSON files and on the task log) (a coded reason, the final event to its webhook and to a new subscription);
 * a second copy of a running node on its port exits at once with one line and changes nothing.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { msgV03, rpc, sseFrames, streamRpc, tempDir } from './support/node.ts';
import {
  freePorts,
  spawnBun,
  startNodeProcess,
  writeFleetFile,
  type Proc,
} from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dataDir = tempDir('lume-a2a-recovery-');
const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.proc.exited));
  rmSync(dataDir, { recursive: true, force: true });
});

const [port] = freePorts(1);
// The test's webhook receiver is on loopback, which a node calls only when told to.
const env = {
  FLEET_FILE: writeFleetFile(dataDir, 1, [
    { name: 'conformance', port: port!, file: 'node/conformance.ts' },
  ]),
  DATA_DIR: dataDir,
  PUSH_ALLOW_HOSTS: '127.0.0.1',
};

/** A webhook receiver on loopback; `next()` resolves with the next body posted. */
function webhook() {
  const bodies: any[] = [];
  const waiters: ((b: any) => void)[] = [];
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      const body = await req.json();
      const w = waiters.shift();
      if (w) w(body);
      else bodies.push(body);
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    next: () =>
      bodies.length ? Promise.resolve(bodies.shift()) : new Promise<any>((r) => waiters.push(r)),
    stop: () => server.stop(true),
  };
}

test.each([['the task log', env]])(
  'a task working when its node is killed with -9 is failed at restart; its webhook and a new subscription get the final state (%s)',
  async (_store, env) => {
    const first = await startNodeProcess('conformance', env);
    procs.push(first);
    // Over 0.3 a message with no known prefix leaves its task working.
    const sent = await rpc(first.url, 'message/send', { message: msgV03('keep working') }, null);
    const id = sent.result.id as string;
    expect(sent.result.status.state).toBe('working');
    const hook = webhook();
    const cfg = await rpc(first.url, 'CreateTaskPushNotificationConfig', {
      taskId: id,
      url: hook.url,
    });
    expect(cfg.error).toBeUndefined();
    // A2A 1.1's generation, asked for: the failure at restart is one more change.
    const workingAt = Number((await rpc(first.url, 'GetTask', { id }, '1.1')).result.generation);
    const before = await streamRpc(first.url, 'SubscribeToTask', { id });
    const stream = sseFrames(before);
    const working = (await stream.next()).value.result.task;
    expect(working.status.state).toBe('TASK_STATE_WORKING');

    first.proc.kill('SIGKILL');
    await first.proc.exited;
    // The stream was cut without a final event: the client only sees it end.
    const cut: any[] = [];
    try {
      for await (const f of stream) cut.push(f);
    } catch {}
    expect(cut).toEqual([]);

    const second = await startNodeProcess('conformance', env);
    procs.push(second);
    const pushed = await hook.next();
    expect(pushed.statusUpdate.taskId).toBe(id);
    expect(pushed.statusUpdate.status.state).toBe('TASK_STATE_FAILED');
    // A 1.0 webhook body is the 1.0 form: no 1.1 members.
    expect(pushed.statusUpdate.generation).toBeUndefined();
    hook.stop();

    const task = (await rpc(second.url, 'GetTask', { id })).result;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.status.message.parts[0].text).toContain('restarted while the task was working');
    expect(task.status.message.parts[1].data.error.code).toBe('TASK_INTERRUPTED');
    expect(task.metadata.recovery.previousState).toBe('working');
    expect((await rpc(second.url, 'GetTask', { id }, '1.1')).result.generation).toBe(
      String(workingAt + 1),
    );

    // A client reconnecting gets the task in its final state, then the stream ends.
    const frames: any[] = [];
    for await (const f of sseFrames(await streamRpc(second.url, 'SubscribeToTask', { id })))
      frames.push(f);
    expect(frames.map((f) => f.result.task.status.state)).toEqual(['TASK_STATE_FAILED']);
    // Over 0.3 too.
    const v03: any[] = [];
    for await (const f of sseFrames(
      await streamRpc(second.url, 'tasks/resubscribe', { id }, '0.3'),
    ))
      v03.push(f);
    expect(v03.map((f) => [f.result.kind, f.result.status.state])).toEqual([['task', 'failed']]);

    // A task that ended normally is still refused, as the protocol says.
    const done = (
      await rpc(second.url, 'SendMessage', {
        message: {
          messageId: `tck-complete-task-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ text: 'x' }],
        },
      })
    ).result.task;
    expect(
      (await (await streamRpc(second.url, 'SubscribeToTask', { id: done.id })).json()).error.code,
    ).toBe(-32004);
    second.proc.kill('SIGTERM');
    await second.proc.exited;
  },
  30_000,
);

test('a second copy of a running node exits at once with one line naming the port, and changes nothing', async () => {
  const first = await startNodeProcess('conformance', env);
  procs.push(first);
  const id = (await rpc(first.url, 'message/send', { message: msgV03('still working') }, null))
    .result.id as string;

  const second = spawnBun(['node/main.ts', '--name', 'conformance'], env);
  procs.push(second);
  expect(await second.proc.exited).toBe(98);
  await second.err.done;
  expect(second.err.lines.filter(Boolean)).toEqual([
    `conformance: port ${port} on 127.0.0.1 is already in use by another process; stop the process holding it (another copy of this node, or a running fleet), or pass --port <free port>.`,
  ]);
  // It opened no task files: the first node's working task was not failed by a recovery.
  expect((await rpc(first.url, 'GetTask', { id })).result.status.state).toBe('TASK_STATE_WORKING');
  // And the port is still the first node's alone: every request reaches the same task list.
  const sizes = await Promise.all(
    Array.from(
      { length: 8 },
      async () => (await (await fetch(`${first.url}/health`)).json()).tasks,
    ),
  );
  expect(new Set(sizes).size).toBe(1);
  first.proc.kill('SIGTERM');
  await first.proc.exited;
}, 30_000);
