/**
 * @module lib/a2a/store/postgres/retry-book — the sent-message book (lib/a2a/store/retry-book.ts)
 * on PostgreSQL, shared by every process of a node, so a retry that reaches another process (or a
 * process started since) answers the task the first send made. One row per (node, creator,
 * messageId), on its own small connection pool; pruned by age and count once a minute and after
 * every thousand sends of this process.
 */

import { SQL } from 'bun';
import type { Log } from '../../../log.ts';
import type { RetryBook, RetryBookBounds, SentEntry } from '../retry-book.ts';

const PRUNE_EVERY = 1_000;

export class PostgresRetryBook implements RetryBook {
  private readonly sql: SQL;
  private readonly ready: Promise<void>;
  private readonly now: () => number;
  private readonly timer: ReturnType<typeof setInterval>;
  private puts = 0;

  constructor(
    url: string,
    private readonly node: string,
    private readonly bounds: RetryBookBounds,
    private readonly log: Log,
  ) {
    this.sql = new SQL(url, { max: 2 });
    this.now = bounds.now ?? Date.now;
    this.ready = this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext('lume_a2a_sent_messages'))`;
      await tx`CREATE TABLE IF NOT EXISTS lume_a2a_sent_messages (
        node text NOT NULL, creator text NOT NULL, message_id text NOT NULL, hash text NOT NULL,
        task_id text NOT NULL, at bigint NOT NULL, PRIMARY KEY (node, creator, message_id))`;
      await tx`CREATE INDEX IF NOT EXISTS lume_a2a_sent_messages_by_time ON lume_a2a_sent_messages (node, at)`;
    });
    this.ready.catch((e) => log('error', 'sent-message table unavailable', { error: e.message }));
    this.timer = setInterval(() => void this.prune(), 60_000);
    this.timer.unref();
  }

  async find(creator: string, messageId: string): Promise<SentEntry | undefined> {
    await this.ready;
    const since = this.now() - this.bounds.windowMs;
    const [row] = await this.sql<{ task_id: string; hash: string; at: string }[]>`
      SELECT task_id, hash, at FROM lume_a2a_sent_messages
      WHERE node = ${this.node} AND creator = ${creator} AND message_id = ${messageId} AND at > ${since}`;
    return row ? { taskId: row.task_id, hash: row.hash, at: Number(row.at) } : undefined;
  }

  async put(creator: string, messageId: string, e: SentEntry): Promise<void> {
    await this.ready;
    await this.sql`
      INSERT INTO lume_a2a_sent_messages (node, creator, message_id, hash, task_id, at)
      VALUES (${this.node}, ${creator}, ${messageId}, ${e.hash}, ${e.taskId}, ${e.at})
      ON CONFLICT (node, creator, message_id)
      DO UPDATE SET hash = excluded.hash, task_id = excluded.task_id, at = excluded.at`;
    if (++this.puts % PRUNE_EVERY === 0) void this.prune();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.ready.catch(() => {});
    await this.sql.close();
  }

  /** Deletes the node's entries past the window, then its oldest past the count. */
  private async prune(): Promise<void> {
    try {
      await this.ready;
      const since = this.now() - this.bounds.windowMs;
      await this
        .sql`DELETE FROM lume_a2a_sent_messages WHERE node = ${this.node} AND at <= ${since}`;
      await this.sql`
        DELETE FROM lume_a2a_sent_messages WHERE node = ${this.node} AND (creator, message_id) IN (
          SELECT creator, message_id FROM lume_a2a_sent_messages WHERE node = ${this.node}
          ORDER BY at DESC OFFSET ${this.bounds.max})`;
    } catch (e) {
      this.log('warn', 'pruning sent messages failed', { error: (e as Error).message });
    }
  }
}
