/**
 * @module lib/mesh/postgres-context — what the parts of the PostgreSQL mesh store share: the
 * Bun.sql client, this hub's id, the health readiness reports, and the basics.
 */

import type { SQL } from 'bun';
import type { StoreBasics } from './store.ts';

export interface PostgresStoreContext extends StoreBasics {
  /** A Bun.sql client; the caller owns it. */
  sql: SQL;
  /** This hub's id, carried by its commit announcements so it can tell them from other hubs'. */
  origin: string;
  /** What readiness reports: the last commit's or probe's failure, if any. */
  health: { problem?: string; lastProbe: number };
}
