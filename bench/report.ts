/**
 * Prints one benchmark's section and, only when the command line says `--write`, records it in
 * docs/benchmarks.md, replacing that section if it is there and leaving every other section as it
 * was. Without `--write` a benchmark run changes no tracked file.
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = join(import.meta.dir, '../docs/benchmarks.md');
const HEADER =
  '# Benchmarks\n\nFigures from `bench/`, each with the command that produced it. The machines are shared and noisy, so\ncompare the ratios measured side by side in one run rather than absolute figures across runs.\n';

/** Whether this run records its figures (`--write`). */
export const WRITE = process.argv.includes('--write');

/** Prints the section that starts with `## <title>`; with `--write` also replaces (or appends) it in docs/benchmarks.md. */
export function reportSection(title: string, body: string): void {
  const heading = `## ${title}\n`;
  const section = `${heading}\n${body.trim()}\n\n`;
  console.log(`\n${section}`);
  if (!WRITE) {
    console.log('(docs/benchmarks.md unchanged; run with --write to record these figures)');
    return;
  }
  const text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : HEADER;
  const start = text.indexOf(heading);
  if (start < 0) writeFileSync(FILE, `${text.trimEnd()}\n\n${section}`);
  else {
    const next = text.indexOf('\n## ', start + heading.length);
    writeFileSync(FILE, text.slice(0, start) + section + (next < 0 ? '' : text.slice(next + 1)));
  }
  console.log(`written to ${FILE}`);
}
