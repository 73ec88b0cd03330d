/**
 * @module lib/mesh/sqlite-appends — appends on the SQLite mesh store: each is checked and given its
 * sequence at once (from the heads in memory), then committed in groups (one transaction per
 * event-loop turn), and its promise resolves only after its group is committed and, on a file, its
 * log fsynced (lib/mesh/sqlite-sync.ts, off the event loop). A new message's
 * id is looked up in the database only when the filter of stored ids (lib/mesh/id-filter.ts)
 * may hold it, so a retry still answers the stored message, across restarts too.
 */

import type { Statement } from 'bun:sqlite';
import { ok, type MeshError, type Result } from './errors.ts';
import { createIdFilter, type IdFilter } from './id-filter.ts';
import { fingerprint, messageToValues, rowToMessage, type MessageRow } from './rows.ts';
import type { SqliteStoreContext } from './sqlite-context.ts';
import {
  asReplay,
  checkDraft,
  idConflict,
  idKey,
  sequenced,
  unknownProject,
  unknownReply,
  type Appended,
  type AppendCode,
  type MessageDraft,
} from './store.ts';
import type { MeshMessage } from './wire.ts';

type Outcome = Result<Appended, AppendCode>;

type Pending = {
  message: MeshMessage;
  values: ReturnType<typeof messageToValues>;
  done: (r: Outcome) => void;
};

/** The open group and what commits it. */
interface Group {
  ctx: SqliteStoreContext;
  schedule: (fn: () => void) => void;
  maxBatch: number;
  batch: Pending[];
  pendingById: Map<string, Pending>;
  /** Retries of a message still in the open group wait for that group's commit. */
  waiting: Map<string, ((r: Outcome) => void)[]>;
  scheduled: boolean;
  commit: (items: Pending[]) => void;
  byId: Statement;
  /** The ids committed (a Bloom filter: "no" is certain). */
  seen: IdFilter;
}

export interface SqliteAppends {
  append(draft: MessageDraft, admit?: () => MeshError<AppendCode> | undefined): Promise<Outcome>;
  /**
   * Commits the open group now; while the log's fsync runs, only with `force` (otherwise the
   * group commits when that fsync returns).
   */
  flush(force?: boolean): void;
}

export function createSqliteAppends(
  ctx: SqliteStoreContext,
  opts: { schedule: (fn: () => void) => void; maxBatch: number },
): SqliteAppends {
  const { db } = ctx;
  const insert = db.query('INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)');
  const setNext = db.query('UPDATE projects SET next_sequence = ? WHERE name = ?');
  const g: Group = {
    ctx,
    ...opts,
    batch: [],
    pendingById: new Map(),
    waiting: new Map(),
    scheduled: false,
    commit: db.transaction((items: Pending[]) => {
      const touched = new Map<string, number>();
      for (const p of items) {
        insert.run(...p.values);
        touched.set(p.message.project, p.message.sequence + 1);
      }
      for (const [project, n] of touched) setNext.run(n, project);
    }),
    byId: db.query('SELECT * FROM messages WHERE project = ? AND msg_id = ?'),
    seen: storedIds(db),
  };
  return { append: (draft, admit) => append(g, draft, admit), flush: (force) => flush(g, force) };
}

function flush(g: Group, force = false): void {
  g.scheduled = false;
  if (g.batch.length === 0) return;
  const { sync } = g.ctx;
  // While an fsync runs the group keeps filling: it commits (one transaction, its pages written to
  // the log once) when that fsync returns, instead of a small commit per event-loop turn.
  if (sync?.busy && !force && g.batch.length < g.maxBatch) return;
  const items = g.batch;
  g.batch = [];
  try {
    g.commit(items);
  } catch (e) {
    g.ctx.log('error', 'mesh store: group commit failed', {
      messages: items.length,
      error: String(e),
    });
    takeBackSequences(g.ctx);
    return settle(g, items, false);
  }
  for (const p of items) g.seen.add(idKey(p.message.project, p.message.messageId));
  if (!sync) return settle(g, items, true);
  // The group is committed; it is answered once the log's fsync that starts after now returns.
  sync.after((e) => {
    if (e)
      g.ctx.log('error', 'mesh store: fsync of the log failed', {
        messages: items.length,
        error: String(e),
      });
    settle(g, items, !e);
    flush(g);
  });
}

/** Answers a group's appends (and the retries waiting on them): stored, or refused when `stored` is false. */
function settle(g: Group, items: Pending[], stored: boolean): void {
  const error: MeshError<AppendCode> | undefined = stored
    ? undefined
    : { code: 'message_rejected', message: 'the hub could not store the message' };
  const { durable } = g.ctx;
  for (const p of items) {
    const { project, sequence, messageId } = p.message;
    if (stored && durable && sequence > (durable.get(project) ?? sequence))
      durable.set(project, sequence);
    const key = idKey(project, messageId);
    g.pendingById.delete(key);
    const r: Outcome = error ? { ok: false, error } : ok({ message: p.message, replayed: false });
    p.done(r);
    for (const w of g.waiting.get(key) ?? []) w(asReplay(r));
    g.waiting.delete(key);
  }
}

/** Sequences handed out for a failed group were never written: takes them back from the database. */
function takeBackSequences(ctx: SqliteStoreContext): void {
  for (const r of ctx.db.query('SELECT name, next_sequence FROM projects').all() as {
    name: string;
    next_sequence: number;
  }[])
    ctx.next.set(r.name, r.next_sequence);
}

function append(
  g: Group,
  draft: MessageDraft,
  admit?: () => MeshError<AppendCode> | undefined,
): Promise<Outcome> {
  const { next, limits, now } = g.ctx;
  const done = (r: Outcome) => Promise.resolve(r);
  if (!next.has(draft.project)) return done(unknownProject(draft.project));
  const checked = checkDraft(draft, limits);
  if (!checked.ok) return done(checked);
  const { messageId: id, candidate, replySeq, contentBytes } = checked.result;
  if (replySeq !== null && replySeq >= next.get(draft.project)!) return done(unknownReply(draft));
  const key = idKey(draft.project, id);
  const pending = g.pendingById.get(key);
  const existing =
    pending?.message ?? (g.seen.mayHave(key) ? stored(g, draft.project, id) : undefined);
  if (existing) {
    if (fingerprint(existing) !== fingerprint(candidate)) return done(idConflict(id));
    if (!pending) return done(ok({ message: existing, replayed: true }));
    return new Promise((resolve) => g.waiting.set(key, [...(g.waiting.get(key) ?? []), resolve]));
  }
  const refused = admit?.();
  if (refused) return done({ ok: false, error: refused });
  const sequence = next.get(draft.project)!;
  next.set(draft.project, sequence + 1);
  const message = sequenced(checked.result, sequence, now());
  return new Promise((resolve) => {
    const p: Pending = {
      message,
      values: messageToValues(message, contentBytes, replySeq),
      done: resolve,
    };
    g.batch.push(p);
    g.pendingById.set(key, p);
    if (g.batch.length >= g.maxBatch) flush(g);
    else if (!g.scheduled) {
      g.scheduled = true;
      g.schedule(() => flush(g));
    }
  });
}

/** The filter of every id in the table, read once as the store opens. */
function storedIds(db: SqliteStoreContext['db']): IdFilter {
  const count = (db.query('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
  const seen = createIdFilter(count);
  const ids = db.query('SELECT project, msg_id FROM messages').iterate() as IterableIterator<{
    project: string;
    msg_id: string;
  }>;
  for (const row of ids) seen.add(idKey(row.project, row.msg_id));
  return seen;
}

/** The committed message with this id in this project, if any. */
function stored(g: Group, project: string, id: string): MeshMessage | undefined {
  const row = g.byId.get(project, id) as MessageRow | null;
  return row ? rowToMessage(row) : undefined;
}
