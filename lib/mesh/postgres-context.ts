/**
 * @module lib/mesh/postgres-context — what the parts of the PostgreSQL mesh store share: the
 * Bun.sql client, this hub's id, the health readiness reports (owned by StoreHealth), and the basics.
 */

import type { SQL } from 'bun';
import type { StoreBasics } from './store.ts';

export interface PostgresStoreContext extends StoreBasics {
  /** A Bun.sql client; the caller owns it. */
  readonly sql: SQL;
  /** This hub's id, carried by its commit announcements so it can tell them from other hubs'. */
  readonly origin: string;
  readonly health: StoreHealth;
}

/** What readiness reports: the last commit's or probe's failure, if any. */
export class StoreHealth {
  #problem: string | undefined;
  #lastProbe = 0;

  /** A commit or probe went through. */
  fine(): void {
    this.#problem = undefined;
  }

  failed(problem: string): void {
    this.#problem = problem;
  }

  /** The outcome of the last commit or probe; starts `probe` in the background at most once a second. */
  report(probe: () => Promise<unknown>): true | string {
    if (Date.now() - this.#lastProbe > 1_000) {
      this.#lastProbe = Date.now();
      probe().then(
        () => this.fine(),
        () => this.failed('the mesh database does not answer'),
      );
    }
    return this.#problem ?? true;
  }
}
