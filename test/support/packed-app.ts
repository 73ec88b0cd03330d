/**
 * Test support: the package as an app installs it. `packedTarball()` runs `bun pm pack` (its
 * prepack builds the declarations) once per test run, however many files ask; `freshApp(dir)`
 * makes an app folder outside the repository the way a user does, `bun init -y` then
 * `bun add <tarball>`, with nothing fetched from the network (see below).
 */

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { hashFiles, keepNewest } from './content-hash.ts';

const ROOT = resolve(import.meta.dir, '../..');

/** Runs a command to its end; its output and exit code. */
export async function run(
  cmd: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(cmd, {
    cwd,
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

let packed: Promise<string> | undefined;

/**
 * Where made tarballs are kept between files and runs: test files run isolated (one module state
 * each, in parallel workers), and a pack builds the declarations with tsc (~14 s of CPU), so the
 * tarball of one content is made once. At most `KEPT_TARBALLS` are kept, the newest.
 */
const CACHE = join(ROOT, 'node_modules', '.cache', 'lume-a2a-packed');
const KEPT_TARBALLS = 2;

/** A hash of everything `bun pm pack` reads: the manifest, the build's configs and the packed files. */
function contentHash(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    files: string[];
  };
  const inputs = ['package.json', 'tsconfig.json', 'tsconfig.types.json', 'README.md'];
  for (const entry of manifest.files.filter((f) => !f.startsWith('dist/'))) {
    if (!existsSync(join(ROOT, entry))) continue;
    if (statSync(join(ROOT, entry)).isFile()) inputs.push(entry);
    else inputs.push(...new Bun.Glob(`${entry}/**/*`).scanSync({ cwd: ROOT, onlyFiles: true }));
  }
  const present = [...new Set(inputs)].sort().filter((f) => existsSync(join(ROOT, f)));
  return hashFiles(ROOT, present).slice(0, 32);
}

/** The tarball `bun pm pack` makes of this checkout: made once per content, then reused. */
export function packedTarball(): Promise<string> {
  packed ??= (async () => {
    const target = join(CACHE, `${contentHash()}.tgz`);
    if (existsSync(target)) return target;
    mkdirSync(CACHE, { recursive: true });
    // Packed beside the cache (the same file system), so the tarball can be renamed into it.
    const dir = mkdtempSync(join(CACHE, 'packing-'));
    try {
      const r = await run(['bun', 'pm', 'pack', '--destination', dir], ROOT);
      if (r.code !== 0) throw new Error(`bun pm pack failed: ${r.err}`);
      // A rename is atomic: a file packing at the same moment finds a whole tarball or none.
      renameSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz'))!), target);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    keepNewest(CACHE, KEPT_TARBALLS, (f) => f.endsWith('.tgz'));
    return target;
  })();
  return packed;
}

/** Forgets the run's tarball (the preload calls it once a file is done); the cache keeps it. */
export function removePackedTarball(): void {
  packed = undefined;
}

/** The app folder must be outside the repository (what a user's app is). */
export function outsideRepository(dir: string): boolean {
  return relative(ROOT, dir).startsWith('..');
}

/**
 * `bun init -y` and `bun add <tarball>` in `dir`. The registry is pointed at a closed loopback
 * port, so no test reaches the network: `bun init` writes its files (its install of @types/bun
 * fails) and `bun add --offline` installs from Bun's cache when it holds every dependency. When it
 * does not, the tarball is unpacked into node_modules/lume-a2a and its dependencies are linked
 * from this checkout's node_modules, with the `lume-node` bin and the `@types/bun` that `bun init`
 * would have installed (it only points at bun-types).
 */
export async function freshApp(dir: string, tarball: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const offline = { BUN_CONFIG_REGISTRY: 'http://127.0.0.1:9/' };
  await run(['bun', 'init', '-y'], dir, offline);
  if (!existsSync(join(dir, 'tsconfig.json'))) throw new Error('bun init wrote no tsconfig.json');
  const added = await run(['bun', 'add', '--offline', tarball], dir, offline);
  if (added.code === 0 && existsSync(join(dir, 'node_modules/.bin/lume-node'))) return;
  const pkg = join(dir, 'node_modules/lume-a2a');
  mkdirSync(pkg, { recursive: true });
  const unpacked = await run(['tar', 'xzf', tarball, '--strip-components=1', '-C', pkg], dir);
  if (unpacked.code !== 0) throw new Error(`tar failed: ${unpacked.err}`);
  for (const dep of readdirSync(join(ROOT, 'node_modules')))
    if (!dep.startsWith('.') && !existsSync(join(dir, 'node_modules', dep)))
      symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep));
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  symlinkSync('../lume-a2a/node/main.ts', join(dir, 'node_modules/.bin/lume-node'));
  const typesBun = join(dir, 'node_modules/@types/bun');
  if (!existsSync(typesBun)) {
    mkdirSync(typesBun, { recursive: true });
    writeFileSync(join(typesBun, 'package.json'), '{"name":"@types/bun","types":"index.d.ts"}');
    writeFileSync(join(typesBun, 'index.d.ts'), '/// <reference types="bun-types" />\n');
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  manifest.dependencies = { ...manifest.dependencies, 'lume-a2a': `file:${tarball}` };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
}

/**
 * The TypeScript blocks of a markdown file whose first line names a file (`// weather.ts`):
 * file name → text.
 */
export function namedSnippets(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of markdown.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g))
    out.set(m[1]!, m[2]!);
  return out;
}
