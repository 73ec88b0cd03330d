/**
 * @module lib/mesh/postgres-store — the mesh store on PostgreSQL, for several hubs on one database.
 * Appends are checked at once and committed in groups: one transaction per group allocates each
 * project's sequences from its counter row (the row lock orders the hubs, so sequences stay
 * gap-free), inserts the messages, and announces `(project, last sequence)` on the mesh channel,
 * which PostgreSQL delivers only if the transaction commits. A `messageId` is unique across hubs.
 */

import type { SQL } from 'bun';
import { fail, ok, type MeshError, type Result } from './errors.ts';
import { missedRows, pageRows, type HistoryQuery } from './history.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { commitNotePrefix } from './postgres-notes.ts';
import { MESH_CHANNEL, applyMeshSchema } from './postgres-schema.ts';
import { parseRef } from './ref.ts';
import { fingerprint, messageToValues, rowToMessage, type MessageRow } from './rows.ts';
import {
  checkDraft,
  checkProjectInput,
  idConflict,
  newEpoch,
  projectOf,
  sequenced,
  unknownReply,
  type Appended,
  type AppendCode,
  type CheckedDraft,
  type MeshStore,
  type MessageDraft,
} from './store.ts';
import type { MeshMessage } from './wire.ts';
import type { Log } from '../log.ts';

export interface PostgresMeshStoreOptions {
  /** A Bun.sql client; the caller owns it (and closes it after the store). */
  sql: SQL;
  log: Log;
  now?: () => number;
  limits?: Partial<MeshLimits>;
  /** This hub's id, carried by its commit announcements so it can tell them from other hubs'. */
  origin?: string;
  /** Starts a group commit when none is running; defaults to `setImmediate`. */
  schedule?: (fn: () => void) => void;
  /** At most this many messages, and about this many bytes, per transaction. */
  maxBatch?: number;
  maxBatchBytes?: number;
}

type Done = (r: Result<Appended, AppendCode>) => void;
interface Pending {
  draft: MessageDraft;
  checked: CheckedDraft;
  createdAt: number;
  /** The message once committed (known only then: its sequence comes from the database). */
  message?: MeshMessage;
  done: Done;
  /** Retries of the same id made while this one was pending. */
  waiters: Done[];
}

const UNIQUE_VIOLATION = '23505';
const RETRYABLE = new Set(['40P01', '40001']); // deadlock, serialization failure

/** Thrown inside a group's transaction to roll it back: these messages reply to a sequence that does not exist yet. */
class BadReplies extends Error {
  constructor(readonly ids: Set<string>) {
    super('replies to unknown sequences');
  }
}

/** A row as Bun.sql returns it (int8 columns arrive as strings) turned into the shared row shape. */
function toRow(r: Record<string, unknown>): MessageRow {
  return {
    project: r.project as string,
    sequence: Number(r.sequence),
    msg_id: r.msg_id as string,
    sender_name: r.sender_name as string,
    sender_presence_id: r.sender_presence_id as string,
    target_kind: r.target_kind as string,
    target_name: (r.target_name as string | null) ?? null,
    target_presence_id: (r.target_presence_id as string | null) ?? null,
    encoding: r.encoding as string,
    data: r.data as string,
    uncompressed_bytes: Number(r.uncompressed_bytes),
    attachments: r.attachments as string,
    content_bytes: Number(r.content_bytes),
    created_at: Number(r.created_at),
    reply_to_sequence:
      r.reply_to_sequence === null || r.reply_to_sequence === undefined
        ? null
        : Number(r.reply_to_sequence),
  };
}

const errorCode = (e: unknown): string | undefined => (e as { errno?: string }).errno;

/** Applies the schema if missing and returns the store. */
export async function createPostgresMeshStore(opts: PostgresMeshStoreOptions): Promise<MeshStore> {
  const { sql, log } = opts;
  const now = opts.now ?? Date.now;
  const limits = { ...MESH_LIMITS, ...opts.limits };
  const schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
  const maxBatch = opts.maxBatch ?? 4096;
  const maxBatchBytes = opts.maxBatchBytes ?? 16 * 1024 * 1024;
  const origin = opts.origin ?? '';
  await applyMeshSchema(sql);

  let batch: Pending[] = [];
  const pendingById = new Map<string, Pending>();
  let scheduled = false;
  let running: Promise<void> | undefined;
  let closed = false;
  // What readiness reports: the last commit's or probe's failure, if any.
  let problem: string | undefined;
  let lastProbe = 0;
  // Appends are numbered; `flush()` waits until everything appended before it is settled, not for a quiet moment.
  let appended = 0;
  let settledThrough = 0;
  let flushWaiters: { upTo: number; resolve: () => void }[] = [];

  /** Runs group commits until nothing is waiting; one transaction at a time, the next group forming meanwhile. */
  function run(): void {
    scheduled = false;
    if (running || batch.length === 0) return;
    running = (async () => {
      while (batch.length > 0) {
        let bytes = 0;
        let n = 0;
        while (n < batch.length && n < maxBatch && bytes < maxBatchBytes)
          bytes += batch[n++]!.checked.contentBytes + 256;
        const items = batch.slice(0, n);
        batch = batch.slice(n);
        await commitGroup(items);
        settledThrough += items.length;
        const ready = flushWaiters.filter((w) => w.upTo <= settledThrough);
        flushWaiters = flushWaiters.filter((w) => w.upTo > settledThrough);
        for (const w of ready) w.resolve();
      }
      running = undefined;
    })();
  }

  /** Commits the open group now; resolves once every append made before this call is settled. */
  function flush(): Promise<void> {
    const upTo = appended;
    run();
    if (settledThrough >= upTo) return Promise.resolve();
    return new Promise((resolve) => flushWaiters.push({ upTo, resolve }));
  }

  function settle(p: Pending, r: Result<Appended, AppendCode>): void {
    pendingById.delete(p.checked.messageId);
    p.done(r);
    for (const w of p.waiters) w(r.ok ? ok({ message: r.result.message, replayed: true }) : r);
  }

  /** Commits one group; messages whose id is already stored are answered from the stored row. */
  async function commitGroup(all: Pending[]): Promise<void> {
    let items = all;
    for (let attempt = 0; items.length > 0; attempt++) {
      try {
        const inserted = await insertGroup(items);
        for (const p of items) {
          const seq = inserted.get(p.checked.messageId);
          if (seq === undefined) {
            settle(
              p,
              fail('unknown_project', `project ${p.checked.candidate.project} does not exist`),
            );
            continue;
          }
          p.message = sequenced(p.checked, seq, p.createdAt);
          settle(p, ok({ message: p.message, replayed: false }));
        }
        problem = undefined;
        return;
      } catch (e) {
        if (e instanceof BadReplies) {
          items = items.filter((p) => {
            if (e.ids.has(p.checked.messageId)) settle(p, unknownReply(p.draft));
            return !e.ids.has(p.checked.messageId);
          });
          continue;
        }
        const code = errorCode(e);
        if (code === UNIQUE_VIOLATION && attempt < 8) {
          // Another hub (or an earlier connection) stored one of these ids: answer those from the stored rows, retry the rest.
          items = await answerStoredIds(items);
          continue;
        }
        if (code !== undefined && RETRYABLE.has(code) && attempt < 8) continue;
        log('error', 'mesh store: group commit failed', {
          messages: items.length,
          error: String(e),
        });
        problem = 'the last group commit failed';
        for (const p of items)
          settle(p, fail('message_rejected', 'the hub could not store the message'));
        return;
      }
    }
  }

  /** Settles the items whose id is already stored; returns the others. */
  async function answerStoredIds(items: Pending[]): Promise<Pending[]> {
    const ids = items.map((p) => p.checked.messageId);
    const rows = (
      (await sql`SELECT * FROM mesh_messages WHERE msg_id = ANY(${ids}::text[])`) as Record<
        string,
        unknown
      >[]
    ).map(toRow);
    const stored = new Map(rows.map((r) => [r.msg_id, rowToMessage(r)]));
    return items.filter((p) => {
      const existing = stored.get(p.checked.messageId);
      if (!existing) return true;
      if (fingerprint(existing) !== fingerprint(p.checked.candidate))
        settle(p, idConflict(p.checked.messageId));
      else settle(p, ok({ message: existing, replayed: true }));
      return false;
    });
  }

  /**
   * One transaction: per project (in name order, so two hubs lock counters in the same order) the
   * counter row is advanced by the group's size and the messages are inserted with the sequences
   * it gave; then each project's new head is announced. Statements are pipelined.
   * @returns messageId -> sequence for what was inserted (a project that does not exist inserts nothing).
   */
  async function insertGroup(items: Pending[]): Promise<Map<string, number>> {
    const byProject = new Map<string, Pending[]>();
    for (const p of items) {
      const list = byProject.get(p.checked.candidate.project);
      if (list) list.push(p);
      else byProject.set(p.checked.candidate.project, [p]);
    }
    const projects = [...byProject.keys()].sort();
    return sql.begin(async (tx) => {
      // Each insert answers one row: the first sequence it allocated (null for an unknown project)
      // and the ids of replies to a sequence not before their own; the messages got first, first + 1, … in list order.
      const inserts = projects.map((project) => {
        const list = byProject.get(project)!;
        const v = list.map((p) =>
          messageToValues(
            sequenced(p.checked, 0, p.createdAt),
            p.checked.contentBytes,
            p.checked.replySeq,
          ),
        );
        const col = (i: number) => v.map((row) => row[i]);
        return tx`
          WITH alloc AS (
            UPDATE mesh_projects SET next_sequence = next_sequence + ${list.length} WHERE name = ${project}
            RETURNING next_sequence - ${list.length} AS first
          ), inserted AS (
          INSERT INTO mesh_messages (project, sequence, msg_id, sender_name, sender_presence_id, target_kind, target_name,
            target_presence_id, encoding, data, uncompressed_bytes, attachments, content_bytes, created_at, reply_to_sequence)
          SELECT ${project}, alloc.first + x.ord - 1, x.msg_id, x.sender_name, x.sender_presence_id, x.target_kind, x.target_name,
            x.target_presence_id, x.encoding, x.data, x.uncompressed_bytes, x.attachments, x.content_bytes, x.created_at, x.reply_to_sequence
          FROM alloc, unnest(${col(2)}::text[], ${col(3)}::text[], ${col(4)}::text[], ${col(5)}::text[], ${col(6)}::text[],
            ${col(7)}::text[], ${col(8)}::text[], ${col(9)}::text[], ${col(10)}::int[], ${col(11)}::text[], ${col(12)}::int[],
            ${col(13)}::bigint[], ${col(14)}::bigint[])
            WITH ORDINALITY AS x(msg_id, sender_name, sender_presence_id, target_kind, target_name, target_presence_id, encoding,
              data, uncompressed_bytes, attachments, content_bytes, created_at, reply_to_sequence, ord)
          RETURNING msg_id, sequence, reply_to_sequence
          )
          SELECT (SELECT first FROM alloc) AS first,
            array(SELECT msg_id FROM inserted WHERE reply_to_sequence >= sequence) AS bad_replies`;
      });
      const announce = tx`
        SELECT pg_notify(${MESH_CHANNEL}, ${commitNotePrefix(origin)} || name || ${'\t'} || (next_sequence - 1))
        FROM mesh_projects WHERE name = ANY(${projects}::text[])`;
      const results = await Promise.all([...inserts, announce]);
      const sequences = new Map<string, number>();
      const bad = new Set<string>();
      projects.forEach((project, i) => {
        const [r] = results[i] as { first: string | number | null; bad_replies: string[] }[];
        // Sequences have no gaps, so a reply is valid exactly when it names an earlier sequence.
        for (const id of r?.bad_replies ?? []) bad.add(id);
        if (r?.first === null || r?.first === undefined) return;
        const first = Number(r.first);
        byProject.get(project)!.forEach((p, k) => sequences.set(p.checked.messageId, first + k));
      });
      if (bad.size > 0) throw new BadReplies(bad);
      return sequences;
    });
  }

  function append(
    draft: MessageDraft,
    admit?: () => MeshError<AppendCode> | undefined,
  ): Promise<Result<Appended, AppendCode>> {
    const done = (r: Result<Appended, AppendCode>) => Promise.resolve(r);
    if (closed) return done(fail('message_rejected', 'the hub is shutting down'));
    const checked = checkDraft(draft, limits);
    if (!checked.ok) return done(checked);
    const { messageId: id, candidate } = checked.result;
    const pending = pendingById.get(id);
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
        createdAt: now(),
        done: resolve,
        waiters: [],
      };
      batch.push(p);
      appended++;
      pendingById.set(id, p);
      if (!running && !scheduled) {
        scheduled = true;
        schedule(run);
      }
    });
  }

  const corrupt = (ref: string) =>
    log('warn', 'mesh store: skipped a message whose size does not add up', { ref });

  return {
    kind: 'postgres',
    limits,

    async hasProject(name) {
      return (await sql`SELECT 1 FROM mesh_projects WHERE name = ${name}`).length > 0;
    },

    async getProject(name) {
      const [r] = await sql`SELECT * FROM mesh_projects WHERE name = ${name}`;
      return r ? projectOf(r) : undefined;
    },

    async createProject(input) {
      const checked = checkProjectInput(input);
      if (!checked.ok) return checked;
      const { name, displayName, description, createdByCwd } = checked.result;
      const [r] = await sql`
        INSERT INTO mesh_projects (name, display_name, description, created_by_cwd, created_at, next_sequence, epoch)
        VALUES (${name}, ${displayName}, ${description}, ${createdByCwd}, ${now()}, 1, ${newEpoch()})
        ON CONFLICT (name) DO NOTHING RETURNING *`;
      if (!r) return fail('project-conflict', `project ${name} already exists`);
      return ok(projectOf(r));
    },

    async listProjects() {
      return (await sql`SELECT * FROM mesh_projects ORDER BY name`).map(projectOf);
    },

    async deleteProject(name) {
      await flush();
      const deleted = await sql.begin(async (tx) => {
        const [p] = await tx`DELETE FROM mesh_projects WHERE name = ${name} RETURNING name`;
        if (p) await tx`DELETE FROM mesh_messages WHERE project = ${name}`;
        return Boolean(p);
      });
      return deleted;
    },

    append,

    async get(ref) {
      const r = parseRef(ref);
      if (!r) return undefined;
      const [row] =
        await sql`SELECT * FROM mesh_messages WHERE project = ${r.project} AND sequence = ${r.sequence}`;
      return row ? rowToMessage(toRow(row)) : undefined;
    },

    async history(q: HistoryQuery) {
      const where = ['project = $1'];
      const params: unknown[] = [q.project];
      if (q.before !== undefined) where.push(`sequence < $${params.push(q.before)}`);
      if (q.after !== undefined) where.push(`sequence > $${params.push(q.after)}`);
      if (q.from !== undefined) where.push(`sender_name = $${params.push(q.from)}`);
      const order = q.after !== undefined ? 'ASC' : 'DESC';
      const text = `SELECT * FROM mesh_messages WHERE ${where.join(' AND ')} ORDER BY sequence ${order} LIMIT $${params.push(q.limit)}`;
      const rows = (await sql.unsafe(text, params)).map(toRow);
      return pageRows(rows, order, limits, corrupt);
    },

    async position(project) {
      await flush();
      const [r] = await sql`SELECT next_sequence, epoch FROM mesh_projects WHERE name = ${project}`;
      if (!r) return undefined;
      const sequence = Number(r.next_sequence) - 1;
      return { epoch: r.epoch as string, sequence };
    },

    async missed(project, name, since, limit) {
      const rows = await sql`
        SELECT * FROM mesh_messages WHERE project = ${project} AND sequence > ${since}
          AND ((target_kind = 'project' AND sender_name <> ${name}) OR (target_kind = 'agent' AND target_name = ${name}))
        ORDER BY sequence DESC LIMIT ${limit + 1}`;
      return missedRows(rows.map(toRow), limit, limits, corrupt);
    },

    async range(project, after, upTo, presenceIds) {
      const rows = await sql`
        SELECT * FROM mesh_messages WHERE project = ${project} AND sequence > ${after} AND sequence <= ${upTo}
          AND (target_kind = 'project' OR target_presence_id = ANY(${presenceIds}::text[]))
        ORDER BY sequence`;
      return pageRows(
        rows.map(toRow),
        'ASC',
        { historyBudgetBytes: Number.MAX_SAFE_INTEGER },
        corrupt,
      );
    },

    async count(project) {
      const [r] = await sql`SELECT count(*) AS n FROM mesh_messages WHERE project = ${project}`;
      return Number(r.n);
    },

    ready() {
      if (Date.now() - lastProbe > 1_000) {
        lastProbe = Date.now();
        sql`SELECT 1`.then(
          () => (problem = undefined),
          () => (problem = 'the mesh database does not answer'),
        );
      }
      return problem ?? true;
    },

    flush,

    async close() {
      await flush();
      closed = true;
    },
  };
}
