/**
 * task.delegate end to end against the real executor (`resolve`) on port 0: the hub's task stays
 * `working` with {executor, job_id} and advances only when read, the job's output becomes the
 * task's artifact, canceling the hub task ends the job's process, and an executor that is down at
 * submit or at read time is handled as the design says. Also over the hub's HTTP+JSON binding (the
 * console's way), which pages on other sites cannot use to make the hub act.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { msgV1, rpc, TEST_AUTH } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'resolve']));
});
afterAll(() => f.stop());

const V1 = { 'A2A-Version': '1.0', ...TEST_AUTH };
const delegate = async (url: string, prompt: string, recipe?: string) =>
  (
    await rpc(url, 'SendMessage', {
      message: {
        ...msgV1(''),
        parts: [
          { data: { skill: 'task.delegate', args: { prompt, ...(recipe ? { recipe } : {}) } } },
        ],
      },
    })
  ).result.task;

/**
 * Reads the task until its state leaves `working`. Each try is a real GetTask, which is what
 * advances the task; the bound is time, not a count, since a loaded machine runs the job slower.
 */
async function readUntilSettled(url: string, id: string, withinMs = 15_000): Promise<any> {
  const deadline = performance.now() + withinMs;
  while (performance.now() < deadline) {
    const t = (await rpc(url, 'GetTask', { id })).result;
    if (t.status.state !== 'TASK_STATE_WORKING') return t;
  }
  throw new Error(`task ${id} still working after ${withinMs} ms of reads`);
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('delegation', () => {
  test('the job runs on the executor; reading the hub task advances it to completed with the output', async () => {
    const t = await delegate(f.hubUrl, 'give me a report of the fleet nodes');
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    const d = t.metadata.delegation;
    expect([d.executor, d.recipe, typeof d.job_id]).toEqual(['resolve', 'fleet-report', 'string']);
    const done = await readUntilSettled(f.hubUrl, t.id);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].name).toBe('job-output');
    expect(done.artifacts[0].parts[0].text).toContain('scanner');
    // The hub asked; the executor never called back: every status read is in the hub's trace.
    // Filtered by capability: reads in a tight loop can leave more than a page of exec.status rows.
    const traced = async (capability: string) =>
      (
        await (
          await fetch(`${f.hubUrl}/api/trace?to=resolve&capability=${capability}&limit=500`)
        ).json()
      ).records;
    expect((await traced('exec.submit')).length).toBeGreaterThan(0);
    expect((await traced('exec.status')).length).toBeGreaterThan(0);
  });

  test('canceling the hub task cancels the job and ends its process', async () => {
    const t = await delegate(f.hubUrl, 'run the long demo', 'demo');
    const status = await localInvoke(f.hubUrl, {
      target: 'resolve',
      capability: 'exec.status',
      args: { job_id: t.metadata.delegation.job_id },
    });
    const pid = status.json.result.job.pid;
    expect(pidAlive(pid)).toBe(true);
    const canceled = (await rpc(f.hubUrl, 'CancelTask', { id: t.id })).result;
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    const after = await localInvoke(f.hubUrl, {
      target: 'resolve',
      capability: 'exec.status',
      args: { job_id: t.metadata.delegation.job_id },
    });
    expect(after.json.result.job.state).toBe('canceled');
    expect(pidAlive(pid)).toBe(false);
  });

  test('a recipe name with shell metacharacters is refused and nothing runs', async () => {
    const t = await delegate(f.hubUrl, 'x', '; rm -rf /');
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.parts[0].text).toContain('UNKNOWN_RECIPE');
  });

  test('through the HTTP+JSON binding, as the console does: POST /message:send delegates, GET /tasks/{id} advances', async () => {
    const send = await fetch(`${f.hubUrl}/message:send`, {
      method: 'POST',
      headers: { ...V1, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'task.delegate', args: { prompt: 'fleet report please' } } }],
        },
      }),
    });
    expect(send.status).toBe(200);
    const t = (await send.json()).task;
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    let state = t.status.state;
    const deadline = performance.now() + 15_000;
    while (state === 'TASK_STATE_WORKING' && performance.now() < deadline)
      state = (await (await fetch(`${f.hubUrl}/tasks/${t.id}`, { headers: V1 })).json()).status
        .state;
    expect(state).toBe('TASK_STATE_COMPLETED');
    const list = await (
      await fetch(`${f.hubUrl}/tasks?includeArtifacts=true`, { headers: V1 })
    ).json();
    const listed = list.tasks.find((x: any) => x.id === t.id);
    expect(listed.artifacts[0].name).toBe('job-output');
    // The console's old route is gone: the binding is the hub's one tasks API.
    expect((await fetch(`${f.hubUrl}/api/tasks`)).status).toBe(404);
  });

  test('reading the task list advances a delegated task too', async () => {
    const t = await delegate(f.hubUrl, 'fleet report');
    const deadline = performance.now() + 15_000;
    let state = t.status.state;
    while (state === 'TASK_STATE_WORKING' && performance.now() < deadline) {
      const page = await (await fetch(`${f.hubUrl}/tasks?pageSize=100`, { headers: V1 })).json();
      state = page.tasks.find((x: any) => x.id === t.id).status.state;
    }
    expect(state).toBe('TASK_STATE_COMPLETED');
  });

  test("a page on another site cannot delegate or cancel, whatever it sends; the hub's own pages can", async () => {
    const before = (await (await fetch(`${f.hubUrl}/tasks?pageSize=100`, { headers: V1 })).json())
      .totalSize;
    const message = {
      message: {
        ...msgV1(''),
        parts: [{ data: { skill: 'task.delegate', args: { prompt: 'fleet report' } } }],
      },
    };
    const evil = { Origin: 'http://evil.example' };
    // A cross-site fetch with JSON, a text/plain form posting JSON-RPC to /a2a (which no content type guards).
    const json = await fetch(`${f.hubUrl}/message:send`, {
      method: 'POST',
      headers: { ...evil, ...V1, 'Content-Type': 'application/json' },
      body: JSON.stringify(message),
    });
    const form = await fetch(`${f.hubUrl}/a2a`, {
      method: 'POST',
      headers: { ...evil, 'Content-Type': 'text/plain' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: message }),
    });
    expect([json.status, form.status]).toEqual([403, 403]);
    expect((await json.json()).error.code).toBe('FORBIDDEN_ORIGIN');
    expect(
      (await (await fetch(`${f.hubUrl}/tasks?pageSize=100`, { headers: V1 })).json()).totalSize,
    ).toBe(before);

    // An empty form post needs no content type check at all: only the origin stops it.
    const demo = await delegate(f.hubUrl, 'run the long demo', 'demo');
    const cancel = `${f.hubUrl}/tasks/${demo.id}:cancel?A2A-Version=1.0`;
    const refused = await fetch(cancel, {
      method: 'POST',
      headers: { ...evil, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(refused.status).toBe(403);
    expect(
      (await (await fetch(`${f.hubUrl}/tasks/${demo.id}`, { headers: V1 })).json()).status.state,
    ).toBe('TASK_STATE_WORKING');
    // The hub's own page, for the task's owner (a console session, or as here the owner's token).
    const own = await fetch(cancel, {
      method: 'POST',
      headers: { Origin: f.hubUrl, ...TEST_AUTH },
    });
    expect([own.status, (await own.json()).status.state]).toEqual([200, 'TASK_STATE_CANCELED']);
  });
});

describe('executor down', () => {
  test('at read time the task stays working; at submit the task waits for input with the reason', async () => {
    const g = await startFleet(await realNodeDefs(['resolve']));
    let jobGroup: number | undefined;
    try {
      const t = await delegate(g.hubUrl, 'run the long demo', 'demo');
      const status = await localInvoke(g.hubUrl, {
        target: 'resolve',
        capability: 'exec.status',
        args: { job_id: t.metadata.delegation.job_id },
      });
      jobGroup = status.json.result.job.pid;
      await g.kill('resolve');
      const read = (await rpc(g.hubUrl, 'GetTask', { id: t.id })).result;
      expect(read.status.state).toBe('TASK_STATE_WORKING');
      const last = (await (await fetch(`${g.hubUrl}/api/trace?to=resolve&limit=1`)).json())
        .records[0];
      expect([last.capability, last.outcome, last.errorCode]).toEqual([
        'exec.status',
        'failed',
        'PEER_UNREACHABLE',
      ]);
      const refused = await delegate(g.hubUrl, 'fleet report');
      expect(refused.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(refused.status.message.parts[0].text).toContain('PEER_UNREACHABLE');
    } finally {
      await g.stop();
      // A stopped node leaves its jobs running (as a crash would); end this one's process group.
      if (jobGroup) {
        try {
          process.kill(-jobGroup, 'SIGKILL');
        } catch {} // already ended
      }
    }
  });
});
