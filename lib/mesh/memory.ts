/** @module mesh/memory — remembered connections (`agentId -> {project, name}`) so agents rejoin after a restart. */

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface RememberedConnection {
  project: string;
  name: string;
}

export interface ConnectionMemory {
  load(): Promise<Record<string, RememberedConnection>>;
  save(agentId: string, c: RememberedConnection): Promise<void>;
  forget(agentId: string): Promise<void>;
}

/** Keeps remembered connections in memory (tests; a process that should not persist). */
export function memoryConnectionMemory(initial: Record<string, RememberedConnection> = {}): ConnectionMemory {
  const data = { ...initial };
  return {
    load: async () => ({ ...data }),
    save: async (id, c) => void (data[id] = { ...c }),
    forget: async (id) => void delete data[id],
  };
}

/** Keeps remembered connections in a JSON file (mode 0600), written atomically; writes run one at a time. */
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
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(d, null, 2), { mode: 0o600 });
      await rename(tmp, path);
    })) as Promise<void>;
  return {
    load: read,
    save: (id, c) => update((d) => void (d[id] = { project: c.project, name: c.name })),
    forget: (id) => update((d) => void delete d[id]),
  };
}
