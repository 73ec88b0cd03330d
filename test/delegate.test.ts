/**
 * task.delegate end to end against the real executor (`resolve`) on port 0: the hub's task stays
 * `working` with {executor, job_id} and advances only when read, the job's output becomes the
 * task's artifact, canceling the hub task ends the job's process, and an executor that is down at
 * submit or at read time is handled as the design says. Also through the hub's HTTP API.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { localInvoke, realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { msgV1, rpc } from './support/node.ts';

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs(['scanner', 'resolve']));
});
afterAll(() => f.stop());

const delegate = async (url: string, prompt: string, recipe?: string) =>
  (await rpc(url, 'SendMessage', { message: { ...msgV1(''), parts: [{ data: { skill: 'task.delegate', args: { prompt, ...(recipe ? { recipe } : {}) } } }] } })).result.task;

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
    const trace = (await (await fetch(`${f.hubUrl}/api/trace?to=resolve&limit=500`)).json()).records;
    expect(trace.some((r: any) => r.capability === 'exec.submit')).toBe(true);
    expect(trace.filter((r: any) => r.capability === 'exec.status').length).toBeGreaterThan(0);
  });

  test('canceling the hub task cancels the job and ends its process', async () => {
    const t = await delegate(f.hubUrl, 'run the long demo', 'demo');
    const status = await localInvoke(f.hubUrl, { target: 'resolve', capability: 'exec.status', args: { job_id: t.metadata.delegation.job_id } });
    const pid = status.json.result.job.pid;
    expect(pidAlive(pid)).toBe(true);
    const canceled = (await rpc(f.hubUrl, 'CancelTask', { id: t.id })).result;
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    const after = await localInvoke(f.hubUrl, { target: 'resolve', capability: 'exec.status', args: { job_id: t.metadata.delegation.job_id } });
    expect(after.json.result.job.state).toBe('canceled');
    expect(pidAlive(pid)).toBe(false);
  });

  test('a recipe name with shell metacharacters is refused and nothing runs', async () => {
    const t = await delegate(f.hubUrl, 'x', '; rm -rf /');
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.parts[0].text).toContain('UNKNOWN_RECIPE');
  });

  test('through the HTTP API: POST /api/tasks delegates, GET /api/tasks/<id> advances', async () => {
    const res = await fetch(`${f.hubUrl}/api/tasks`, { method: 'POST', headers: { Origin: f.hubUrl, 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: 'fleet report please' }) });
    const t = await res.json();
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    let state = t.status.state;
    const deadline = performance.now() + 15_000;
    while (state === 'TASK_STATE_WORKING' && performance.now() < deadline) state = (await (await fetch(`${f.hubUrl}/api/tasks/${t.id}`)).json()).status.state;
    expect(state).toBe('TASK_STATE_COMPLETED');
    const list = await (await fetch(`${f.hubUrl}/api/tasks`)).json();
    expect(list.tasks.some((x: any) => x.id === t.id)).toBe(true);
    const refused = await fetch(`${f.hubUrl}/api/tasks`, { method: 'POST', headers: { Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: 'x' }) });
    expect(refused.status).toBe(403);
  });
});

describe('executor down', () => {
  test('at read time the task stays working; at submit the task waits for input with the reason', async () => {
    const g = await startFleet(await realNodeDefs(['resolve']));
    let jobGroup: number | undefined;
    try {
      const t = await delegate(g.hubUrl, 'run the long demo', 'demo');
      const status = await localInvoke(g.hubUrl, { target: 'resolve', capability: 'exec.status', args: { job_id: t.metadata.delegation.job_id } });
      jobGroup = status.json.result.job.pid;
      await g.kill('resolve');
      const read = (await rpc(g.hubUrl, 'GetTask', { id: t.id })).result;
      expect(read.status.state).toBe('TASK_STATE_WORKING');
      const last = (await (await fetch(`${g.hubUrl}/api/trace?to=resolve&limit=1`)).json()).records[0];
      expect([last.capability, last.outcome, last.errorCode]).toEqual(['exec.status', 'failed', 'PEER_UNREACHABLE']);
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
