/**
 * @module hub/fleet/fleet-file — editing the fleet file a hub writes (`bun run fleet add | remove`,
 * a join): read the file written so far, or the one read at start with its `./` paths made
 * absolute, change one entry, validate, write through a temporary file. `fixtures/` is never the
 * target (see `writableFleetFile` in lib/config/fleet-file.ts).
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-file.ts';
import { parseFleet } from '../../lib/config/fleet-file.ts';

export interface FleetDoc {
  hub: Record<string, unknown>;
  nodes: Record<string, unknown>[];
  [other: string]: unknown;
}

/** The fleet file to edit does not read (edited by hand into something else). */
export class FleetFileInvalid extends Error {
  constructor(
    readonly path: string,
    why: string,
  ) {
    super(`fleet: ${path} does not read: ${why}`);
    this.name = 'FleetFileInvalid';
  }
}

/** The document to edit: `to` when it exists, else `from` (node files named absolutely). */
export function editableFleet(from: string, to: string): FleetDoc {
  const source = existsSync(to) ? to : from;
  let doc: FleetDoc;
  try {
    doc = JSON.parse(readFileSync(source, 'utf8')) as FleetDoc;
    if (!Array.isArray(doc?.nodes) || typeof doc.hub !== 'object' || doc.hub === null)
      throw new Error('it needs a hub object and a nodes list');
  } catch (e) {
    throw new FleetFileInvalid(source, (e as Error).message);
  }
  if (source === to) return doc;
  const fromDir = dirname(resolve(from));
  const keepFile = (m: Record<string, unknown>) =>
    typeof m.file === 'string' && /^\.\.?\//.test(m.file)
      ? { ...m, file: resolve(fromDir, m.file) }
      : m;
  return { ...doc, hub: keepFile(doc.hub), nodes: doc.nodes.map(keepFile) };
}

/** Validates and writes the document. @throws Error when it is no longer a fleet (a bug). */
export async function saveFleet(to: string, doc: FleetDoc): Promise<void> {
  parseFleet(doc);
  await writeFileAtomic(to, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o644 });
}
