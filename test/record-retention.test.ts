/**
 * A bound on the executor's job records and the hub's negotiation records: each keeps at most a
 * count and nothing past an age, deleting the oldest first, never a running job.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { JobFiles, type JobRecord, newJobId } from '../node/resolve/jobs.ts';
import {
  listIds,
  newNegotiationId,
  retainRecords,
  saveRecord,
} from '../hub/workbench/negotiation-store.ts';
import { join } from 'node:path';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const HOUR = 3_600_000;
const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const dirs: string[] = [];
const scratch = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function job(
  state: JobRecord['state'],
  endedAt: number | null,
  startedAt = NOW - 100 * HOUR,
): JobRecord {
  return {
    job_id: newJobId(),
    recipe: 'echo',
    state,
    pid: null,
    exitCode: state === 'running' ? null : 0,
    output: '',
    outputTruncated: false,
    startedAt: new Date(startedAt).toISOString(),
    endedAt: endedAt === null ? null : new Date(endedAt).toISOString(),
  };
}

test('job records: past the count the oldest finished go first, then those past the age; a running job stays', () => {
  const files = new JobFiles(scratch(), { maxStored: 4, maxAgeMs: 48 * HOUR }, () => NOW);
  const running = job('running', null, NOW - 500 * HOUR);
  const ended = [
    job('succeeded', NOW - 60 * HOUR), // past the age
    job('failed', NOW - 5 * HOUR),
    job('canceled', NOW - 4 * HOUR),
    job('succeeded', NOW - 3 * HOUR),
    job('succeeded', NOW - 2 * HOUR),
  ];
  for (const r of [running, ...ended]) files.write(r);
  // Six records, four kept: the two that ended first go (one of them also past the age).
  expect(files.retain()).toBe(2);
  expect(files.ids().sort()).toEqual([running, ...ended.slice(2)].map((r) => r.job_id).sort());
  // Within the count, age alone: nothing more is older than 48 h.
  expect(files.retain()).toBe(0);
  expect(files.read(running.job_id)?.state).toBe('running');
});

test('job records: settling jobs runs retention as they finish', () => {
  const files = new JobFiles(scratch(), { maxStored: 3, maxAgeMs: 1000 * HOUR }, () => NOW);
  const jobs = Array.from({ length: 6 }, () => job('running', null));
  for (const r of jobs) files.write(r);
  jobs.forEach((r, i) =>
    files.settle({
      ...r,
      state: 'succeeded',
      endedAt: new Date(NOW - (10 - i) * HOUR).toISOString(),
    }),
  );
  // Never more than the bound once settled; the last to end are the ones kept.
  expect(files.ids().sort()).toEqual(
    jobs
      .slice(3)
      .map((r) => r.job_id)
      .sort(),
  );
});

test('job records are the owner’s only: folders left open by an older version are tightened', () => {
  const data = scratch();
  const jobs = join(data, 'resolve', 'jobs');
  mkdirSync(jobs, { recursive: true });
  chmodSync(join(data, 'resolve'), 0o755);
  chmodSync(jobs, 0o755);
  writeFileSync(join(jobs, 'old.json'), '{}', { mode: 0o644 });
  const files = new JobFiles(data);
  const r = job('running', null);
  files.write(r);
  const mode = (p: string) => statSync(join(data, p)).mode & 0o777;
  expect([
    mode('resolve'),
    mode('resolve/jobs'),
    mode('resolve/jobs/old.json'),
    mode(`resolve/jobs/${r.job_id}.json`),
  ]).toEqual([0o700, 0o700, 0o600, 0o600]);
});

test('negotiation records: the oldest go past the count, and any past the age', async () => {
  const dir = join(scratch(), 'negotiations');
  const starts = [NOW - 900 * HOUR, NOW - 50 * HOUR, NOW - 40 * HOUR, NOW - 30 * HOUR, NOW - HOUR];
  const ids = starts.map((t) => newNegotiationId(t));
  const retention = { maxStored: 3, maxAgeMs: 720 * HOUR, now: () => NOW };
  for (const id of ids) await saveRecord(dir, id, { id }, retention);
  expect(await listIds(dir, 100)).toEqual(ids.slice(2).reverse());
  expect(readdirSync(dir).length).toBe(3);
  // Age alone: 35 h keeps only the two newest.
  expect(await retainRecords(dir, { maxStored: 100, maxAgeMs: 35 * HOUR, now: () => NOW })).toBe(1);
  expect(await listIds(dir, 100)).toEqual(ids.slice(3).reverse());
});
