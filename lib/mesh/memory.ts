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
  /** Set by an explicit disconnect (unix ms): the record is a tombstone, so a process still running that connection stops instead of rejoining. */
  ended?: number;
}

/** Keeps only the known fields (a file may hold anything). */
function clean(c: RememberedConnection): RememberedConnection {
  const out: RememberedConnection = { project: c.project, name: c.name };
  if (typeof c.resumeSecret === 'string') out.resumeSecret = c.resumeSecret;
  if (typeof c.epoch === 'string' && Number.isSafeInteger(c.since)) {
    out.epoch = c.epoch;
    out.since = c.since;
  }
  if (Number.isSafeInteger(c.ended))
    return { project: out.project, name: out.name, ended: c.ended! };
  return out;
}

/** Tombstones are kept this long, then dropped at the next write (a connection still running that long has long been told). */
const TOMBSTONE_MS = 24 * 60 * 60 * 1000;

/** The live records of a stored map (tombstones left out). */
const live = (d: Record<string, RememberedConnection>) =>
  Object.fromEntries(Object.entries(d).filter(([, c]) => c.ended === undefined));

/**
 * A save that may not bring back a connection an explicit disconnect ended: only a fresh connect
 * (`revive`) replaces a tombstone.
 */
function put(
  d: Record<string, RememberedConnection>,
  id: string,
  c: RememberedConnection,
  revive: boolean,
): void {
  if (d[id]?.ended !== undefined && !revive) return;
  d[id] = clean(c);
}

export interface ConnectionMemory {
  /** The remembered connections (never the tombstones). */
  load(): Promise<Record<string, RememberedConnection>>;
  /** Remembers a connection; `revive` (a fresh connect) also replaces a tombstone. */
  save(agentId: string, c: RememberedConnection, opts?: { revive?: boolean }): Promise<void>;
  /** Forgets a connection, leaving a tombstone that `ended` reports. */
  forget(agentId: string): Promise<void>;
  /** Whether an explicit disconnect ended this agent's connection since it was last revived. */
  ended(agentId: string): Promise<boolean>;
}

/** Keeps remembered connections in memory (tests; a process that should not persist). */
export function memoryConnectionMemory(
  initial: Record<string, RememberedConnection> = {},
): ConnectionMemory {
  const data: Record<string, RememberedConnection> = { ...initial };
  return {
    load: async () => live(data),
    save: async (id, c, o) => put(data, id, c, o?.revive === true),
    forget: async (id) => {
      const c = data[id];
      if (c) data[id] = { project: c.project, name: c.name, ended: Date.now() };
    },
    ended: async (id) => data[id]?.ended !== undefined,
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
    load: async () => live(await read()),
    save: (id, c, o) => update((d) => put(d, id, c, o?.revive === true)),
    forget: (id) =>
      update((d) => {
        const c = d[id];
        if (c) d[id] = { project: c.project, name: c.name, ended: Date.now() };
        for (const [k, v] of Object.entries(d))
          if (v.ended !== undefined && v.ended < Date.now() - TOMBSTONE_MS) delete d[k];
      }),
    ended: async (id) => (await read())[id]?.ended !== undefined,
  };
}
