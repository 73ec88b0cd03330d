/**
 * @module hub/mesh/backend — opens the mesh's storage: a SQLite file for one hub (the default), or
 * a PostgreSQL database shared by several hubs (`MESH_DATABASE_URL=postgres://…`), with the
 * cluster that lets those hubs share names, presences and deliveries.
 */

import { SQL } from 'bun';
import type { Log } from '../../lib/log.ts';
import { createPostgresMeshStore } from '../../lib/mesh/postgres-store.ts';
import { openMeshDatabase } from '../../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../../lib/mesh/sqlite-store.ts';
import type { MeshStore } from '../../lib/mesh/store.ts';
import type { MeshCluster } from './cluster.ts';
import { createPostgresCluster, newHubId } from './postgres-cluster.ts';

export interface MeshBackend {
  store: MeshStore;
  /** Present with PostgreSQL. */
  cluster?: MeshCluster;
  /** Where the record lives, for the start-up line (never the database password). */
  describe: string;
  /** Commits what is pending, releases this hub's lease and closes the database. */
  close(): Promise<void>;
}

export interface MeshBackendOptions {
  /** `postgres://…` or `postgresql://…`; absent means SQLite at `sqliteFile`. */
  databaseUrl?: string;
  sqliteFile: string;
  log: Log;
  /** How long a hub's presences outlive its last lease renewal (PostgreSQL only). */
  leaseMs?: number;
}

/** True for a URL this backend can open as PostgreSQL. */
const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url);

/** The URL without its password, for logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable)';
  }
}

/** @throws Error when the database cannot be reached or holds a newer storage version. */
export async function openMeshBackend(o: MeshBackendOptions): Promise<MeshBackend> {
  if (!o.databaseUrl) {
    const store = createSqliteMeshStore({ db: openMeshDatabase(o.sqliteFile), log: o.log });
    return { store, describe: `sqlite ${o.sqliteFile}`, close: () => store.close() };
  }
  if (!isPostgresUrl(o.databaseUrl))
    throw new Error('MESH_DATABASE_URL must start with postgres:// or postgresql://');
  // A few connections: group commits, reads for recovery and delivery, presence changes; LISTEN has its own.
  const sql = new SQL(o.databaseUrl, { max: 8 });
  const hubId = newHubId();
  const store = await createPostgresMeshStore({ sql, log: o.log, origin: hubId });
  const cluster = await createPostgresCluster({
    sql,
    log: o.log,
    hubId,
    ...(o.leaseMs ? { leaseMs: o.leaseMs } : {}),
  });
  return {
    store,
    cluster,
    describe: `postgres ${redactUrl(o.databaseUrl)} as ${hubId}`,
    async close() {
      await store.close();
      await cluster.close();
      await sql.close();
    },
  };
}
