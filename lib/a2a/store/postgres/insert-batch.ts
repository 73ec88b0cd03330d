/**
 * @module lib/a2a/store/postgres/insert-batch — the first writes of new tasks, gathered per
 * event-loop turn into one multi-row INSERT: one statement, one commit (one WAL flush) for every
 * task begun in the turn, and each caller answered only once that statement is done.
 */

import type { SQL } from 'bun';
import type { TaskRecord } from '../task-store.ts';
import { timeOf } from './schema.ts';
import { logText, type Writer } from './statements.ts';

/** Rows in one statement at most (11 parameters each, far below PostgreSQL's 65,535). */
const MAX_ROWS = 64;
const PARAMS = 11;

interface Pending {
  params: unknown[];
  resolve(): void;
  reject(e: unknown): void;
}

/** `($1, $2::uuid, …)` for row `i`: the columns of lib/a2a/store/postgres/schema.ts. */
function rowSql(i: number): string {
  const p = (n: number) => `$${i * PARAMS + n}`;
  return `(${p(1)}, ${p(2)}::uuid, ${p(3)}, ${p(4)}, ${p(5)}::bigint, 1, ${p(6)}, ${p(7)}, ${p(8)}, ${p(8)},
    CASE WHEN ${p(9)}::int IS NULL THEN NULL ELSE now() + ${p(9)}::int * interval '1 millisecond' END, ${p(10)}, ${p(11)})`;
}

/** The statement for `n` rows, made once per size. */
const statements: string[] = [];
function insertSql(n: number): string {
  let text = statements[n];
  if (text === undefined) {
    const rows = Array.from({ length: n }, (_, i) => rowSql(i)).join(',\n');
    text = `INSERT INTO lume_a2a_tasks (node, id, context_id, state, ts, version, task, push, writer, owner, lease_until, creator, events)
VALUES ${rows}`;
    statements[n] = text;
  }
  return text;
}

export class InsertBatch {
  private waiting: Pending[] = [];

  constructor(
    private readonly sql: SQL,
    private readonly writer: Writer,
  ) {}

  /**
   * A new task's first write (`body` its task as JSON, `lease` the turn's lease in ms or null):
   * resolves once the statement that carries it is committed.
   * @throws the database error (as a rejected promise), for every task of that statement.
   */
  add(id: string, rec: TaskRecord, body: string, lease: number | null): Promise<void> {
    const t = rec.task;
    const w = this.writer;
    return new Promise((resolve, reject) => {
      if (!this.waiting.length) setImmediate(() => this.flush());
      this.waiting.push({
        params: [
          w.node,
          id,
          t.contextId,
          t.status.state,
          timeOf(t),
          body,
          JSON.stringify(rec.push),
          w.process,
          lease,
          rec.creator ?? null,
          logText(rec),
        ],
        resolve,
        reject,
      });
    });
  }

  /** Sends what waits, at most MAX_ROWS rows per statement. */
  private flush(): void {
    const all = this.waiting;
    this.waiting = [];
    for (let i = 0; i < all.length; i += MAX_ROWS) {
      const part = all.slice(i, i + MAX_ROWS);
      this.sql
        .unsafe(
          insertSql(part.length),
          part.flatMap((p) => p.params),
        )
        .then(
          () => {
            for (const p of part) p.resolve();
          },
          (e: unknown) => {
            for (const p of part) p.reject(e);
          },
        );
    }
  }
}
