/**
 * @module lib/mesh/postgres-appends — appends on the PostgreSQL mesh store: each is checked at once
 * and joins the open group; groups commit one transaction at a time (lib/mesh/postgres-insert.ts),
 * the next forming meanwhile, and an append resolves once its group is settled. A `messageId` is
 * unique within its project across hubs: an id another hub stored is answered from the stored row.
 */

import { fail, ok, type MeshError, type Result } from './errors.ts';
import type { PostgresStoreContext } from './postgres-context.ts';
import { BadReplies, insertGroup } from './postgres-insert.ts';
import { toRow } from './postgres-rows.ts';
import { fingerprint, rowToMessage } from './rows.ts';
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
  type CheckedDraft,
  type MessageDraft,
} from './store.ts';

/** The key a pending message is found under: its id within its project. */
const keyOf = (p: { checked: { messageId: string; candidate: { project: string } } }) =>
  idKey(p.checked.candidate.project, p.checked.messageId);

type Outcome = Result<Appended, AppendCode>;
type Done = (r: Outcome) => void;
interface Pending {
  draft: MessageDraft;
  checked: CheckedDraft;
  createdAt: number;
  done: Done;
  /** Retries of the same id made while this one was pending. */
  waiters: Done[];
}

const UNIQUE_VIOLATION = '23505';
const RETRYABLE = new Set(['40P01', '40001']); // deadlock, serialization failure
const errorCode = (e: unknown): string | undefined => (e as { errno?: string }).errno;

/** The groups forming and committing. */
interface Groups {
  ctx: PostgresStoreContext;
  schedule: (fn: () => void) => void;
  /** At most this many messages, and about this many bytes, per transaction. */
  maxBatch: number;
  maxBatchBytes: number;
  batch: Pending[];
  pendingById: Map<string, Pending>;
  scheduled: boolean;
  running: Promise<void> | undefined;
  closed: boolean;
  // Appends are numbered; `flush()` waits until everything appended before it is settled, not for a quiet moment.
  appended: number;
  settledThrough: number;
  flushWaiters: { upTo: number; resolve: () => void }[];
}

export interface PostgresAppends {
  append(draft: MessageDraft, admit?: () => MeshError<AppendCode> | undefined): Promise<Outcome>;
  /** Commits the open group now; resolves once every append made before this call is settled. */
  flush(): Promise<void>;
  /** Commits what is pending; later appends are refused. */
  close(): Promise<void>;
}

export function createPostgresAppends(
  ctx: PostgresStoreContext,
  opts: { schedule: (fn: () => void) => void; maxBatch: number; maxBatchBytes: number },
): PostgresAppends {
  const g: Groups = {
    ctx,
    ...opts,
    batch: [],
    pendingById: new Map(),
    scheduled: false,
    running: undefined,
    closed: false,
    appended: 0,
    settledThrough: 0,
    flushWaiters: [],
  };
  return {
    append: (draft, admit) => append(g, draft, admit),
    flush: () => flush(g),
    async close() {
      await flush(g);
      g.closed = true;
    },
  };
}

/** Runs group commits until nothing is waiting; one transaction at a time, the next group forming meanwhile. */
function run(g: Groups): void {
  g.scheduled = false;
  if (g.running || g.batch.length === 0) return;
  g.running = (async () => {
    while (g.batch.length > 0) {
      let bytes = 0;
      let n = 0;
      while (n < g.batch.length && n < g.maxBatch && bytes < g.maxBatchBytes)
        bytes += g.batch[n++]!.checked.contentBytes + 256;
      const items = g.batch.slice(0, n);
      g.batch = g.batch.slice(n);
      await commitGroup(g, items);
      g.settledThrough += items.length;
      const ready = g.flushWaiters.filter((w) => w.upTo <= g.settledThrough);
      g.flushWaiters = g.flushWaiters.filter((w) => w.upTo > g.settledThrough);
      for (const w of ready) w.resolve();
    }
    g.running = undefined;
  })();
}

function flush(g: Groups): Promise<void> {
  const upTo = g.appended;
  run(g);
  if (g.settledThrough >= upTo) return Promise.resolve();
  return new Promise((resolve) => g.flushWaiters.push({ upTo, resolve }));
}

function settle(g: Groups, p: Pending, r: Outcome): void {
  g.pendingById.delete(keyOf(p));
  p.done(r);
  for (const w of p.waiters) w(asReplay(r));
}

/** Commits one group; messages whose id is already stored are answered from the stored row. */
async function commitGroup(g: Groups, all: Pending[]): Promise<void> {
  const { ctx } = g;
  let items = all;
  for (let attempt = 0; items.length > 0; attempt++) {
    try {
      const inserted = await insertGroup(ctx.sql, ctx.origin, items);
      for (const p of items) {
        const seq = inserted.get(keyOf(p));
        if (seq === undefined) settle(g, p, unknownProject(p.checked.candidate.project));
        else settle(g, p, ok({ message: sequenced(p.checked, seq, p.createdAt), replayed: false }));
      }
      ctx.health.fine();
      return;
    } catch (e) {
      if (e instanceof BadReplies) {
        items = items.filter((p) => {
          if (e.ids.has(keyOf(p))) settle(g, p, unknownReply(p.draft));
          return !e.ids.has(keyOf(p));
        });
        continue;
      }
      const code = errorCode(e);
      if (code === UNIQUE_VIOLATION && attempt < 8) {
        // Another hub (or an earlier connection) stored one of these ids: answer those from the stored rows, retry the rest.
        items = await answerStoredIds(g, items);
        continue;
      }
      if (code !== undefined && RETRYABLE.has(code) && attempt < 8) continue;
      ctx.log('error', 'mesh store: group commit failed', {
        messages: items.length,
        error: String(e),
      });
      ctx.health.failed('the last group commit failed');
      for (const p of items)
        settle(g, p, fail('message_rejected', 'the hub could not store the message'));
      return;
    }
  }
}

/** Settles the items whose id is already stored; returns the others. */
async function answerStoredIds(g: Groups, items: Pending[]): Promise<Pending[]> {
  const ids = items.map((p) => p.checked.messageId);
  const projects = items.map((p) => p.checked.candidate.project);
  const rows = (
    (await g.ctx.sql`SELECT m.* FROM mesh_messages m
      JOIN unnest(${projects}::text[], ${ids}::text[]) AS k(project, msg_id)
        ON m.project = k.project AND m.msg_id = k.msg_id`) as Record<string, unknown>[]
  ).map(toRow);
  const stored = new Map(rows.map((r) => [idKey(r.project, r.msg_id), rowToMessage(r)]));
  return items.filter((p) => {
    const existing = stored.get(keyOf(p));
    if (!existing) return true;
    if (fingerprint(existing) !== fingerprint(p.checked.candidate))
      settle(g, p, idConflict(p.checked.messageId));
    else settle(g, p, ok({ message: existing, replayed: true }));
    return false;
  });
}

function append(
  g: Groups,
  draft: MessageDraft,
  admit?: () => MeshError<AppendCode> | undefined,
): Promise<Outcome> {
  const done = (r: Outcome) => Promise.resolve(r);
  if (g.closed) return done(fail('message_rejected', 'the hub is shutting down'));
  const checked = checkDraft(draft, g.ctx.limits);
  if (!checked.ok) return done(checked);
  const { messageId: id, candidate } = checked.result;
  const pending = g.pendingById.get(idKey(candidate.project, id));
  if (pending) {
    // The same id is waiting for its group: a retry answers the original once it is committed.
    if (fingerprint(pending.checked.candidate) !== fingerprint(candidate))
      return done(idConflict(id));
    return new Promise((resolve) => pending.waiters.push(resolve));
  }
  const refused = admit?.();
  if (refused) return done({ ok: false, error: refused });
  return new Promise((resolve) => {
    const p: Pending = {
      draft,
      checked: checked.result,
      createdAt: g.ctx.now(),
      done: resolve,
      waiters: [],
    };
    g.batch.push(p);
    g.appended++;
    g.pendingById.set(keyOf(p), p);
    if (!g.running && !g.scheduled) {
      g.scheduled = true;
      g.schedule(() => run(g));
    }
  });
}
