/**
 * The executor killed with -9 mid-job: its job's process group lives on as an orphan, and the
 * next executor on the same data folder ends it at start and reads the job as failed.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { parseFleet } from '../lib/config/fleet-file.ts';
import { createPeerClient } from '../lib/peer/client.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import type { Job } from '../node/resolve/jobs.ts';
import { tempDir } from './support/node.ts';
import { running, spawnBun, waitFor, type Proc } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dataDir = tempDir('lume-a2a-execcrash-');
const procs: Proc[] = [];
/** Process groups of jobs the tests started: ended here too when a test fails before its own end. */
const groups: number[] = [];
afterAll(async () => {
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {}
  }
  for (const p of procs) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.proc.exited));
  rmSync(dataDir, { recursive: true, force: true });
});

async function startExecutorProcess() {
  const p = spawnBun(['test/support/executor-process.ts'], { FLEET_FILE: '-', DATA_DIR: dataDir });
  procs.push(p);
  const url = /listening on (\S+)/.exec(await p.out.until(/listening on /))![1]!;
  const fleet = parseFleet({
    hub: { name: 'a2a', port: 1, role: 'hub', file: 'hub/main.ts' },
    nodes: [{ name: 'resolve', port: 1, role: 'resolve', file: 'node/resolve/index.ts', url }],
  });
  const hub = createPeerClient({ signer: (await loadPeerIdentity(dataDir, 'a2a')).signer, fleet });
  const call = async (capability: string, args: unknown): Promise<any> => {
    const r = await hub.peerFetch('resolve', capability, args);
    if (!r.ok) throw new Error(`${capability}: ${r.error.code}`);
    return r.result;
  };
  return {
    ...p,
    status: async (id: string) => (await call('exec.status', { job_id: id })).job as Job,
    call,
  };
}

test('kill -9 of the executor mid-job: the next start ends the orphaned group and fails the job', async () => {
  const first = await startExecutorProcess();
  const { job_id } = await first.call('exec.submit', { prompt: 'x', recipe: 'slow' });
  let job = await first.status(job_id);
  if (job.pid) groups.push(job.pid);
  // The recipe prints its child's pid once it runs (a Bun start: seconds on a loaded machine).
  await waitFor(
    'the job prints its child',
    async () => /child \d+/.test((job = await first.status(job_id)).output),
    1000,
  );
  const leader = job.pid!;
  groups.push(leader);
  const child = Number(/child (\d+)/.exec(job.output)![1]);

  first.proc.kill('SIGKILL');
  await first.proc.exited;
  // The job's group is its own (setsid): the executor's death does not end it.
  expect(running(child)).toBe(true);

  const second = await startExecutorProcess();
  const after = await second.status(job_id);
  expect([after.state, after.error]).toEqual(['failed', 'executor restarted']);
  await waitFor('the orphaned job and its child end', () => !running(leader) && !running(child));
  second.proc.kill('SIGTERM');
  await second.proc.exited;
}, 30_000);

test('a group whose leader has exited: only the processes carrying the job id are ended', async () => {
  // `sh` leads its own group, starts two sleeps (one with the job's id, one without) and exits.
  const jobId = 'job-0123456789abcdef0123456789abcdef';
  const sh = Bun.spawn(
    [
      'sh',
      '-c',
      'sleep 600 >/dev/null & echo $!; JOB_ID=someone-else sleep 600 >/dev/null & echo $!',
    ],
    { detached: true, env: { PATH: process.env.PATH!, JOB_ID: jobId }, stdout: 'pipe' },
  );
  const [ours, stranger] = (await new Response(sh.stdout).text())
    .trim()
    .split('\n')
    .map(Number) as [number, number];
  await sh.exited;
  expect([running(ours), running(stranger)]).toEqual([true, true]);
  const { endOrphanedJob } = await import('../node/resolve/process-group.ts');
  expect(endOrphanedJob(sh.pid, 12345, jobId)).toEqual([ours]);
  await waitFor("the job's process ends", () => !running(ours));
  expect(running(stranger)).toBe(true);
  process.kill(-sh.pid, 'SIGKILL');
});
