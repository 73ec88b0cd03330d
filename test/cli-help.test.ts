/**
 * Every command of package.json that takes arguments (hub/cli/*.ts, hub/main.ts, node/main.ts, with
 * or without Bun flags before the file)
 * answers `--help` and `-h` with its usage on stdout and exit code 0: no stack trace, nothing
 * started, nothing written in the data folder.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { tempDir } from './support/node.ts';

setDefaultTimeout(60_000); // per file (Bun scopes it so): a dozen Bun processes on a busy machine

const ROOT = resolve(import.meta.dir, '..');
const scripts = (await Bun.file(resolve(ROOT, 'package.json')).json()).scripts as Record<
  string,
  string
>;
/** Script name → the file it runs, for the scripts that run a command of the repository. */
const commands = Object.entries(scripts).flatMap(([name, line]) => {
  const m = /^bun (?:--[\w-]+=\S+ )*((?:hub\/cli\/[\w-]+|hub\/main|node\/main)\.ts)$/.exec(line);
  return m ? [[name, m[1]!] as const] : [];
});
const dataDir = tempDir('lume-a2a-help-');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs one command with `flag`; one that does not end by itself is killed and reported so. */
async function help(file: string, flag: string) {
  const proc = Bun.spawn(['bun', file, flag], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, LOG_FORMAT: 'text' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  // A bound, not a synchronisation: a command that started something instead never exits.
  const guard = setTimeout(() => proc.kill(), 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(guard);
  return { file, flag, code, stdout, stderr };
}

test('the commands found are the ones that take arguments', () => {
  expect(commands.map(([name]) => name).sort()).toEqual(
    [
      'console-url',
      'fleet',
      'hub',
      'keys',
      'mcp',
      'mesh',
      'negotiate',
      'new-node',
      'node',
      'start',
    ].sort(),
  );
});

test('--help and -h print the usage on stdout and exit 0, and leave the data folder empty', async () => {
  const files = [...new Set(commands.map(([, file]) => file))];
  const runs = [];
  // Two at a time: the machine is shared.
  for (let i = 0; i < files.length; i += 2)
    runs.push(
      ...(await Promise.all(
        files.slice(i, i + 2).flatMap((f) => [help(f, '--help'), help(f, '-h')]),
      )),
    );
  for (const r of runs) {
    const seen = { file: r.file, flag: r.flag, code: r.code, stderr: r.stderr };
    expect(seen).toEqual({ file: r.file, flag: r.flag, code: 0, stderr: '' });
    expect([r.file, /^usage: bun run /im.test(r.stdout)]).toEqual([r.file, true]);
  }
  expect(readdirSync(dataDir)).toEqual([]);
});

test('new-node: an unknown flag is the reason and the usage, exit 2, no stack trace', async () => {
  const r = await help('hub/cli/new-node.ts', '--frobnicate');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("new-node: Unknown option '--frobnicate'");
  expect(r.stderr).toContain('usage: bun run new-node <name>');
  expect(r.stderr).not.toMatch(/^\s+at /m);
});
