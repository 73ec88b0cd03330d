/**
 * @module test/support/bundle — the processes the suite starts run a bundle of the repository's
 * entry files: `bun build --splitting` of hub/main.ts, node/main.ts, every command in hub/cli/
 * and every node file in node/, made once per content and kept in
 * node_modules/.cache/lume-a2a-bundle/<hash>/. A start from the bundle costs about 310 ms of CPU
 * against about 450 ms from the ~400 source modules, and the suite starts over a hundred.
 *
 * A node file a fleet file names (`node/scanner/index.ts`) is loaded by node/main.ts at run time;
 * a preload's resolver sends that import to the file's bundled build, so the node and its file
 * share one copy of lib/. Bundle and sources are the same code: `LUME_TEST_FROM_SOURCE=1` runs
 * the sources instead, and the README's quick start, the package's tests and `bun run fleet`'s
 * children always do.
 */

import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { HEADER_SIZE_FLAG } from '../../lib/net/header-limit.ts';
import { join, relative, resolve } from 'node:path';

import { hashFiles, keepNewest } from './content-hash.ts';

const ROOT = resolve(import.meta.dir, '../..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'lume-a2a-bundle');
/** Bundles kept, the current one included. */
const KEPT = 2;
/** What the bundle is made of: a change to any of these makes a new one. */
const INPUT_DIRS = ['lib', 'hub', 'node'];
const INPUT_FILES = ['package.json', 'bun.lock', 'tsconfig.json', 'bunfig.toml'];

let entries: string[] | undefined;
/** The entry files a spawned `bun <file>` may name, relative to the root. */
function entryFiles(): string[] {
  const glob = (pattern: string) => [...new Bun.Glob(pattern).scanSync({ cwd: ROOT })];
  return (entries ??= [
    'hub/main.ts',
    'node/main.ts',
    ...glob('hub/cli/*.ts'),
    ...glob('node/*/index.ts'),
    ...glob('node/*.ts').filter((f) => f !== 'node/main.ts'),
  ].sort());
}

function contentHash(): string {
  const files = [
    ...INPUT_FILES.filter((f) => existsSync(join(ROOT, f))),
    ...INPUT_DIRS.flatMap((d) =>
      [...new Bun.Glob(`${d}/**/*`).scanSync({ cwd: ROOT, onlyFiles: true })].sort(),
    ),
  ];
  return hashFiles(ROOT, files).slice(0, 24);
}

/** The preload that sends a run-time import of a bundled node file to its build. */
function redirectSource(dir: string): string {
  return `// Made by test/support/bundle.ts: node files named in a fleet file load from this bundle.
const SOURCE = ${JSON.stringify(`${ROOT}/`)};
const BUNDLE = ${JSON.stringify(`${dir}/`)};
const BUILT = new Set(${JSON.stringify(entryFiles().filter((f) => f.startsWith('node/')))});
Bun.plugin({
  name: 'lume-a2a-bundled-nodes',
  setup(build) {
    build.onResolve({ filter: /^\\/.*\\/node\\/.*\\.ts$/ }, (args) => {
      const rel = args.path.startsWith(SOURCE) ? args.path.slice(SOURCE.length) : '';
      return BUILT.has(rel) ? { path: BUNDLE + rel.replace(/\\.ts$/, '.js') } : undefined;
    });
  },
});
`;
}

/** Builds the bundle of this content, unless a run before made it; answers its folder. */
function build(): string {
  const dir = join(CACHE, contentHash());
  if (existsSync(join(dir, 'redirect.js'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  // node/main.ts and the node files it loads share chunks (one copy of lib/ in a node); each
  // command is a file of its own, since splitting across all of them makes hundreds of chunks.
  const commands = entryFiles().filter((f) => f.startsWith('hub/cli/'));
  const nodesAndHub = entryFiles().filter((f) => !commands.includes(f));
  for (const [files, split] of [
    [nodesAndHub, ['--splitting']],
    [commands, []],
  ] as const) {
    const made = Bun.spawnSync(
      ['bun', 'build', '--target=bun', ...split, `--root=${ROOT}`, `--outdir=${tmp}`, ...files],
      { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
    );
    if (made.exitCode !== 0)
      throw new Error(`bun build of the entry files failed: ${made.stderr.toString()}`);
  }
  writeFileSync(join(tmp, 'redirect.js'), redirectSource(dir));
  try {
    renameSync(tmp, dir);
  } catch {
    // Another test process made the same bundle first: theirs is the same.
    rmSync(tmp, { recursive: true, force: true });
  }
  // Bundles of older contents are kept beside this one (for a checkout switched back).
  keepNewest(CACHE, KEPT, (name) => !name.includes('.tmp-'));
  return dir;
}

let made: string | undefined;
const fromSource = process.env.LUME_TEST_FROM_SOURCE === '1';

/**
 * The command for `bun <args>`: when `args` names an entry file (after any `--preload <file>`),
 * that file's bundled build with the redirecting preload, started as the kit's scripts start it
 * (reading request headers up to lib/net/header-limit.ts's bound); anything else (`bun run …`, a
 * test's own script, an app's file) unchanged.
 */
export function bunCommand(args: readonly string[]): string[] {
  let at = 0;
  while (args[at] === '--preload') at += 2;
  const file = args[at];
  const rel = file && !file.startsWith('-') ? relative(ROOT, resolve(ROOT, file)) : '';
  if (!rel.endsWith('.ts') || !entryFiles().includes(rel)) return ['bun', ...args];
  if (fromSource) return ['bun', HEADER_SIZE_FLAG, ...args];
  made ??= build();
  return [
    'bun',
    HEADER_SIZE_FLAG,
    ...args.slice(0, at),
    '--preload',
    join(made, 'redirect.js'),
    join(made, rel.replace(/\.ts$/, '.js')),
    ...args.slice(at + 1),
  ];
}
