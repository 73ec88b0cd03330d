/**
 * @module hub/http/console — serves the browser console (`console/`, no build step) at `/`: its HTML,
 * scripts, styles and icons (not its type declarations or checker config), and the three modules
 * its import map names (preact, preact/hooks, htm) from an allow-list resolved out of
 * node_modules. Nothing else under node_modules is reachable, and no path from the request is
 * ever joined onto a folder without being checked against the list of console files first.
 */

import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const typeOf = (file: string) =>
  TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream';

/** Every file under `dir` (relative paths with `/`), read once at start. */
function listFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listFiles(full, base));
    else out.push(relative(base, full).split('\\').join('/'));
  }
  return out;
}

export function createConsole(opts: { consoleDir: string; nodeModules: string }): {
  fetch(req: Request): Response | undefined;
} {
  const vendor = new Map<string, string>([
    ['/vendor/preact.mjs', join(opts.nodeModules, 'preact/dist/preact.mjs')],
    ['/vendor/hooks.mjs', join(opts.nodeModules, 'preact/hooks/dist/hooks.mjs')],
    ['/vendor/htm.mjs', join(opts.nodeModules, 'htm/dist/htm.mjs')],
  ]);
  // Only what a browser loads: the folder's type declarations and checker config stay private.
  const served = listFiles(opts.consoleDir).filter((f) =>
    Object.hasOwn(TYPES, f.slice(f.lastIndexOf('.'))),
  );
  const files = new Map(served.map((f) => [`/${f}`, join(opts.consoleDir, f)]));
  const serve = (path: string) =>
    new Response(Bun.file(path), {
      headers: {
        'content-type': typeOf(path),
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      },
    });

  return {
    fetch(req) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
      const { pathname } = new URL(req.url);
      if (pathname === '/' || pathname === '/index.html') return serve(files.get('/index.html')!);
      const file = vendor.get(pathname) ?? files.get(pathname);
      return file ? serve(file) : undefined;
    },
  };
}
