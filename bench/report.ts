/**
 * Writes one benchmark's section into docs/benchmarks.md, replacing that section if it is there
 * and leaving every other section as it was.
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = join(import.meta.dir, '../docs/benchmarks.md');
const HEADER = '# Benchmarks\n\nFigures from `bench/`, each with the command that produced it. The machines are shared and noisy, so\ncompare the ratios measured side by side in one run rather than absolute figures across runs.\n';

/** Replaces (or appends) the section that starts with `## <title>`. */
export function writeSection(title: string, body: string): void {
  const text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : HEADER;
  const heading = `## ${title}\n`;
  const section = `${heading}\n${body.trim()}\n\n`;
  const start = text.indexOf(heading);
  if (start < 0) {
    writeFileSync(FILE, `${text.trimEnd()}\n\n${section}`);
    return;
  }
  const next = text.indexOf('\n## ', start + heading.length);
  writeFileSync(FILE, text.slice(0, start) + section + (next < 0 ? '' : text.slice(next + 1)));
}
