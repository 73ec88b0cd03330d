/**
 * @module lib/mesh/memory — remembered connections (`agentId -> {project, name, resume secret, stream
 * position}`) so agents rejoin after a restart under their own name and recover what they missed.
 */

import { mkdir, readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../atomic-file.ts';
import { dirname } from 'node:path';

export interface RememberedConnection {
  project: string;
  name: string;
  /** The secret that takes the name's live presence over; a credential, so the file is 0600 and it is never logged. */
  resumeSecret?: string;
  /** The project's stream epoch and the last sequence handled, for recovery. */
  epoch?: string;
  since?: number;
}

/** Keeps only the known fields (a file may hold anything). */
function clean(c: RememberedConnection): RememberedConnection {
  const out: RememberedConnection = { project: c.project, name: c.name };
  if (typeof c.resumeSecret === 'string') out.resumeSecret = c.resumeSecret;
  if (typeof c.epoch === 'string' && Number.isSafeInteger(c.since)) {
    out.epoch = c.epoch;
    out.since = c.since;
  }
  return out;
}

export interface ConnectionMemory {
  load(): Promise<Record<string, RememberedConnection>>;
  save(agentId: string, c: RememberedConnection): Promise<void>;
  forget(agentId: string): Promise<void>;
}

/** Keeps remembered connections in memory (tests; a process that should not persist). */
export function memoryConnectionMemory(
  initial: Record<string, RememberedConnection> = {},
): ConnectionMemory {
  const data = { ...initial };
  return {
    load: async () => ({ ...data }),
    save: async (id, c) => void (data[id] = clean(c)),
    forget: async (id) => void delete data[id],
  };
}

/** Keeps remembered connections in a JSON file (mode 0600: it holds resume secrets), written atomically; writes run one at a time. */
export function fileConnectionMemory(path: string): ConnectionMemory {
  let chain: Promise<unknown> = Promise.resolve();
  const read = async (): Promise<Record<string, RememberedConnection>> => {
    try {
      const doc = JSON.parse(await readFile(path, 'utf8')) as unknown;
      return doc && typeof doc === 'object' ? (doc as Record<string, RememberedConnection>) : {};
    } catch {
      return {};
    }
  };
  const update = (fn: (d: Record<string, RememberedConnection>) => void) =>
    (chain = chain.then(async () => {
      const d = await read();
      fn(d);
      await mkdir(dirname(path), { recursive: true });
      await writeFileAtomic(path, JSON.stringify(d, null, 2), { mode: 0o600 });
    })) as Promise<void>;
  return {
    load: read,
    save: (id, c) => update((d) => void (d[id] = clean(c))),
    forget: (id) => update((d) => void delete d[id]),
  };
}
