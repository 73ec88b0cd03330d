/**
 * @module mesh/memory — remembered connections (`agentId -> {project, name}`) so agents rejoin: the
 * interface a persistent store implements, and the in-memory one.
 */

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
