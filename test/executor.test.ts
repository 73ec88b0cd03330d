/**
 * The executor on resolve through a real server (port 0) and the signed peer channel: jobs from
 * the recipe allow-list run as child processes, end with their output, are picked by keyword,
 * cancelled with their children, stopped at their time limit, capped in output; bad recipe names
 * and job ids are refused before anything runs or any path is formed.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import resolve from '../node/resolve/index.ts';
import { children, exists, running, startExecutor, type ExecutorNode } from './support/executor.ts';
import { FIXTURES, msgV1, rpc } from './support/node.ts';
import { fixtureFleet } from './support/fleet.ts';
import { waitFor } from './support/processes.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let x: ExecutorNode;
beforeAll(async () => {
  x = await startExecutor();
});
afterAll(async () => {
  await x.stop();
  rmSync(x.dataDir, { recursive: true, force: true });
});

const done = (j: { state: string }) => j.state !== 'running';
const jobFiles = () => readdirSync(x.jobsDir).sort();

describe('a job from submit to its output', () => {
  test('submit answers running at once; status reaches succeeded with the output and progress', async () => {
    const sub = await x.ok('exec.submit', { prompt: 'run the demo', recipe: 'demo' });
    expect(Object.keys(sub).sort()).toEqual(['job_id', 'recipe', 'state']);
    expect([sub.recipe, sub.state, sub.job_id]).toEqual([
      'demo',
      'running',
      expect.stringMatching(/^job-[0-9a-f]{32}$/),
    ]);
    const job = await x.waitFor(sub.job_id, done);
    expect({
      ...job,
      pid: typeof job.pid,
      startedAt: typeof job.startedAt,
      endedAt: typeof job.endedAt,
    }).toEqual({
      job_id: sub.job_id,
      recipe: 'demo',
      state: 'succeeded',
      pid: 'number',
      exitCode: 0,
      output: `demo job ${sub.job_id}: 3 steps of 20 ms, prompt of 12 characters\nprogress 1/3\nprogress 2/3\nprogress 3/3\ndemo done\n`,
      outputTruncated: false,
      progress: { done: 3, total: 3 },
      startedAt: 'string',
      endedAt: 'string',
    });
    expect(exists(job.pid!)).toBe(false);
    // The record persists: one JSON file named by the id, written by rename (no temp file left).
    const stored = JSON.parse(readFileSync(join(x.jobsDir, `${sub.job_id}.json`), 'utf8'));
    expect([stored.state, stored.output]).toEqual(['succeeded', job.output]);
    expect(jobFiles().filter((f) => !f.endsWith('.json'))).toEqual([]);
  });

  test('the real recipes: fleet report, git history, disk usage of the data folder', async () => {
    const outputs: Record<string, string> = {};
    for (const recipe of ['fleet-report', 'git-history', 'disk-usage']) {
      const { job_id } = await x.ok('exec.submit', { prompt: 'go', recipe });
      const job = await x.waitFor(job_id, done);
      expect([recipe, job.state, job.exitCode]).toEqual([recipe, 'succeeded', 0]);
      outputs[recipe] = job.output;
    }
    const { defaults, optIn } = await fixtureFleet();
    expect(outputs['fleet-report']!.split('\n')[0]).toBe(
      `Fleet report: hub a2a on port 4100, ${defaults.length} default nodes, ${optIn.length} opt-in`,
    );
    expect(outputs['fleet-report']).toContain('- resolve      port 4107  node/resolve/index.ts');
    expect(outputs['git-history']).toMatch(
      /^Git history: \d+\+? commits from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\nAuthors:\n- /,
    );
    expect(outputs['disk-usage']).toStartWith(`Disk usage of ${x.dataDir}\n`);
    expect(outputs['disk-usage']).toMatch(/\n- resolve: \d+ KiB\n/);
    expect(outputs['disk-usage']).toMatch(/\nFile system .+: \d+ KiB used of \d+ KiB/);
  });

  test('a failing job: failed with its exit code and the reason', async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'broken' });
    const job = await x.waitFor(job_id, done);
    expect([job.state, job.exitCode, job.error]).toEqual(['failed', 3, 'exited with code 3']);
  });

  test('the prompt is data: on stdin it comes back verbatim, never run', async () => {
    const prompt = '$(id); rm -rf / `id` && echo pwned | cat /etc/passwd';
    const { job_id } = await x.ok('exec.submit', { prompt, recipe: 'echo' });
    expect(await x.waitFor(job_id, done)).toMatchObject({ state: 'succeeded', output: prompt });
    const long = 'y'.repeat(4000);
    const big = await x.ok('exec.submit', { prompt: long, recipe: 'echo' });
    expect((await x.waitFor(big.job_id, done)).output).toBe(long);
    expect(await x.call('exec.submit', { prompt: `${long}y`, recipe: 'echo' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    expect(await x.call('exec.submit', { prompt: '   ', recipe: 'echo' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_PROMPT' },
    });
  });

  test("a job sees a minimal environment, not the executor's (no keys, no tokens)", async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'printenv' });
    const job = await x.waitFor(job_id, done);
    const env = Object.fromEntries(
      job.output
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(env).toEqual({
      PATH: expect.any(String),
      HOME: join(x.dataDir, 'resolve'),
      LANG: 'C.UTF-8',
      EXTRA: 'fixed',
      JOB_ID: job_id,
    });
  });

  test('over A2A: a data part {"skill":"exec.submit"} answers the job id as an artifact', async () => {
    const t = (
      await rpc(x.node.url, 'SendMessage', {
        message: {
          ...msgV1(''),
          parts: [{ data: { skill: 'exec.submit', args: { prompt: 'a fleet report please' } } }],
        },
      })
    ).result.task;
    expect([t.status.state, t.artifacts[0].name]).toEqual(['TASK_STATE_COMPLETED', 'exec.submit']);
    const { job_id, recipe } = t.artifacts[0].parts[0].data;
    expect(recipe).toBe('fleet-report');
    const s = (
      await rpc(x.node.url, 'SendMessage', {
        message: { ...msgV1(''), parts: [{ data: { skill: 'exec.status', args: { job_id } } }] },
      })
    ).result.task;
    expect(s.artifacts[0].parts[0].data.job.job_id).toBe(job_id);
    await x.waitFor(job_id, done);
    // A text message never starts a job: exec.* are not read-only, so no keyword pick reaches them.
    const text = (
      await rpc(x.node.url, 'SendMessage', { message: msgV1('submit a git history job') })
    ).result.task;
    expect(text.artifacts?.[0]?.name ?? null).not.toStartWith('exec.');
  });
});

describe('the prompt picks a recipe', () => {
  test('by keyword, whole words only; nothing matching is NO_RECIPE with the list', async () => {
    const picks: [string, string][] = [];
    for (const prompt of [
      'Give me a report of the fleet nodes',
      'Summarise the git history of this checkout',
      'How much disk space is used?',
      'run the long demo with progress',
    ]) {
      const sub = await x.ok('exec.submit', { prompt });
      picks.push([prompt, sub.recipe]);
      await x.waitFor(sub.job_id, done);
    }
    expect(picks).toEqual([
      ['Give me a report of the fleet nodes', 'fleet-report'],
      ['Summarise the git history of this checkout', 'git-history'],
      ['How much disk space is used?', 'disk-usage'],
      ['run the long demo with progress', 'demo'],
    ]);
    const before = jobFiles();
    // "catalog" holds "log" but is not the word log.
    const none = await x.call('exec.submit', { prompt: 'show the catalog' });
    expect(none).toMatchObject({
      ok: false,
      error: {
        code: 'NO_RECIPE',
        message: expect.stringContaining('fleet-report, git-history, disk-usage, demo'),
      },
    });
    expect(jobFiles()).toEqual(before);
  });

  test('unknown or malicious recipe names are refused and nothing runs', async () => {
    const before = { files: jobFiles(), children: children() };
    const names = [
      '; rm -rf /',
      '../x',
      'a b',
      '$(id)',
      '`id`',
      'demo; id',
      'demo && id',
      '../../fixtures/resolve/demo',
      '/bin/sh',
      'DEMO',
      'demo\n',
      '',
      'model',
      'nope',
    ];
    const codes = [];
    for (const recipe of names)
      codes.push([
        recipe,
        (await x.call('exec.submit', { prompt: 'run the demo', recipe })) as any,
      ]);
    expect(codes.map(([n, r]) => [n, r.ok, r.error.code])).toEqual(
      names.map((n) => [n, false, 'UNKNOWN_RECIPE']),
    );
    expect(await x.call('exec.submit', { prompt: 'demo', recipe: 'x'.repeat(65) })).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    expect({ files: jobFiles(), children: children() }).toEqual(before);
  });
});

describe('cancel, time limit, output cap', () => {
  test('cancel mid-job ends the process and its child; cancel is idempotent', async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'slow' });
    const mid = await x.waitFor(
      job_id,
      (j) => j.progress !== undefined && /child \d+/.test(j.output),
    );
    expect(mid.state).toBe('running');
    const child = Number(/child (\d+)/.exec(mid.output)![1]);
    expect([running(mid.pid!), running(child)]).toEqual([true, true]);
    const canceled = (await x.ok('exec.cancel', { job_id })).job;
    expect([canceled.state, canceled.endedAt !== null, canceled.error]).toEqual([
      'canceled',
      true,
      undefined,
    ]);
    // The job's own pid is reaped (Bun's reaper may finish just after the exit is reported; waited
    // for as a condition with a deadline); its child is not running (killed with the group).
    const deadline = performance.now() + 5_000;
    while (exists(mid.pid!) && performance.now() < deadline)
      await new Promise((r) => setImmediate(r));
    expect(exists(mid.pid!)).toBe(false);
    // The child got its SIGKILL with the group; on a loaded machine it may take a moment to die.
    await waitFor("the job's child ends", () => !running(child));
    expect((await x.ok('exec.cancel', { job_id })).job).toEqual(canceled);
    expect(await x.status(job_id)).toEqual(canceled);
  });

  test('cancelling a finished job leaves it as it finished', async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'demo' });
    const finished = await x.waitFor(job_id, done);
    expect((await x.ok('exec.cancel', { job_id })).job).toEqual(finished);
  });

  test('a job over its time limit is killed and failed with that reason', async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'hang' });
    const job = await x.waitFor(job_id, done);
    expect([job.state, job.error, job.exitCode]).toEqual([
      'failed',
      'time limit of 300 ms exceeded',
      null,
    ]);
    expect(exists(job.pid!)).toBe(false);
  });

  test('output past the cap is cut and flagged; the job still succeeds', async () => {
    const { job_id } = await x.ok('exec.submit', { prompt: 'x', recipe: 'flood' });
    const job = await x.waitFor(job_id, done);
    expect([job.state, job.outputTruncated, Buffer.byteLength(job.output)]).toEqual([
      'succeeded',
      true,
      1000,
    ]);
    expect(job.output).toStartWith('demo job ');
  });
});

describe('job ids', () => {
  test('unknown and path-like ids are JOB_NOT_FOUND; nothing outside the jobs folder is read', async () => {
    // A record-shaped file one folder up, which a path-joining lookup would find.
    const planted = join(x.dataDir, 'resolve', 'planted.json');
    writeFileSync(
      planted,
      JSON.stringify({ job_id: '../planted', state: 'succeeded', output: 'secret' }),
    );
    const ids = [
      'job-00000000000000000000000000000000',
      '../planted',
      'job-../../planted',
      '/etc/passwd',
      '..',
      '.',
      '',
      'job-0000000000000000000000000000000g',
      'JOB-00000000000000000000000000000000',
    ];
    for (const job_id of ids) {
      for (const cap of ['exec.status', 'exec.cancel']) {
        const r = (await x.call(cap, { job_id })) as any;
        expect([cap, job_id, r.ok, r.error?.code]).toEqual([cap, job_id, false, 'JOB_NOT_FOUND']);
      }
    }
    expect(await x.call('exec.status', {})).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    expect(await x.call('exec.status', { job_id: 7 })).toMatchObject({
      ok: false,
      error: { code: 'BAD_ARGS' },
    });
    expect(existsSync(planted)).toBe(true);
  });
});

test('resolve without a data folder declares exec.* but runs nothing: EXECUTOR_UNAVAILABLE', async () => {
  const def = resolve({ fixturesDir: FIXTURES });
  expect(
    def.catalog.capabilities.filter((c) => c.id.startsWith('exec.')).map((c) => [c.id, c.readOnly]),
  ).toEqual([
    ['exec.submit', false],
    ['exec.status', false],
    ['exec.cancel', false],
  ]);
  expect(await def.catalog.invoke('exec.submit', { prompt: 'fleet report' })).toMatchObject({
    ok: false,
    error: { code: 'EXECUTOR_UNAVAILABLE' },
  });
});
