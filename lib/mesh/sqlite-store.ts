/**
 * @module lib/mesh/sqlite-store — the mesh store on bun:sqlite (one hub, the embedded default). Appends
 * are checked and given their sequence at once, then committed in groups (one transaction per
 * event-loop turn), and each append's promise resolves only after its group is committed.
 */

import type { Database } from 'bun:sqlite';
import { fail, ok, type MeshError, type Result } from './errors.ts';
import { pageRows, runHistory, runMissed, type HistoryQuery } from './history.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { parseRef } from './ref.ts';
import { fingerprint, messageToValues, rowToMessage, type MessageRow } from './rows.ts';
import { MESH_SCHEMA, migrateMeshSchema } from './schema.ts';
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
  type MeshStore,
  type Project,
} from './store.ts';
import type { MeshMessage } from './wire.ts';
import type { Log } from '../log.ts';

export interface SqliteMeshStoreOptions {
  db: Database;
  now?: () => number;
  log: Log;
  limits?: Partial<MeshLimits>;
  /** Runs a group commit later; defaults to `setImmediate` (after the current turn's frames). */
  schedule?: (fn: () => void) => void;
  /** A group this large commits at once. */
  maxBatch?: number;
}

type Pending = {
  message: MeshMessage;
  values: ReturnType<typeof messageToValues>;
  done: (r: Result<Appended, AppendCode>) => void;
};

/** Creates the store on an open database (the schema is applied if missing). */
export function createSqliteMeshStore(opts: SqliteMeshStoreOptions): MeshStore {
  const { db, log } = opts;
  const now = opts.now ?? Date.now;
  const limits = { ...MESH_LIMITS, ...opts.limits };
  const schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
  const maxBatch = opts.maxBatch ?? 2048;
  db.exec(MESH_SCHEMA);
  migrateMeshSchema(db);

  // Next sequence per project, authoritative in memory between commits.
  const next = new Map<string, number>();
  // Each project's stream epoch: a new one whenever a project of that name is created again.
  const epochs = new Map<string, string>();
  for (const r of db.query('SELECT name, next_sequence, epoch FROM projects').all() as {
    name: string;
    next_sequence: number;
    epoch: string;
  }[]) {
    next.set(r.name, r.next_sequence);
    epochs.set(r.name, r.epoch);
  }

  const insert = db.query('INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)');
  const setNext = db.query('UPDATE projects SET next_sequence = ? WHERE name = ?');
  const byId = db.query('SELECT * FROM messages WHERE msg_id = ?');
  const byRef = db.query('SELECT * FROM messages WHERE project = ? AND sequence = ?');
  const inRange = db.query(
    `SELECT * FROM messages WHERE project = ?1 AND sequence > ?2 AND sequence <= ?3
       AND (target_kind = 'project' OR target_presence_id IN (SELECT value FROM json_each(?4)))
     ORDER BY sequence`,
  );
  let batch: Pending[] = [];
  const pendingById = new Map<string, Pending>();
  // Retries of a message still in the open group wait for that group's commit.
  const waiting = new Map<string, ((r: Result<Appended, AppendCode>) => void)[]>();
  let scheduled = false;

  const commit = db.transaction((items: Pending[]) => {
    const touched = new Map<string, number>();
    for (const p of items) {
      insert.run(...p.values);
      touched.set(p.message.project, p.message.sequence + 1);
    }
    for (const [project, n] of touched) setNext.run(n, project);
  });

  /** Commits the open group now. */
  function flush(): void {
    scheduled = false;
    if (batch.length === 0) return;
    const items = batch;
    batch = [];
    let error: MeshError<AppendCode> | undefined;
    try {
      commit(items);
    } catch (e) {
      log('error', 'mesh store: group commit failed', { messages: items.length, error: String(e) });
      error = { code: 'message_rejected', message: 'the hub could not store the message' };
      // Sequences handed out for this group were never written: take them back from the database.
      for (const r of db.query('SELECT name, next_sequence FROM projects').all() as {
        name: string;
        next_sequence: number;
      }[])
        next.set(r.name, r.next_sequence);
    }
    for (const p of items) {
      pendingById.delete(p.message.messageId);
      const r: Result<Appended, AppendCode> = error
        ? { ok: false, error }
        : ok({ message: p.message, replayed: false });
      p.done(r);
      for (const w of waiting.get(p.message.messageId) ?? [])
        w(error ? r : ok({ message: p.message, replayed: true }));
      waiting.delete(p.message.messageId);
    }
  }

  function getProject(name: string): Project | undefined {
    const r = db.query('SELECT * FROM projects WHERE name = ?').get(name) as
      | Parameters<typeof projectOf>[0]
      | null;
    return r ? projectOf(r) : undefined;
  }

  function append(
    draft: Parameters<MeshStore['append']>[0],
    admit?: () => MeshError<AppendCode> | undefined,
  ): Promise<Result<Appended, AppendCode>> {
    const done = (r: Result<Appended, AppendCode>) => Promise.resolve(r);
    if (!next.has(draft.project))
      return done(fail('unknown_project', `project ${draft.project} does not exist`));
    const checked = checkDraft(draft, limits);
    if (!checked.ok) return done(checked);
    const { messageId: id, candidate, replySeq, contentBytes } = checked.result;
    if (replySeq !== null && replySeq >= next.get(draft.project)!) return done(unknownReply(draft));
    const pending = pendingById.get(id);
    const existing =
      pending?.message ??
      (() => {
        const row = byId.get(id) as MessageRow | null;
        return row ? rowToMessage(row) : undefined;
      })();
    if (existing) {
      if (fingerprint(existing) !== fingerprint(candidate)) return done(idConflict(id));
      if (!pending) return done(ok({ message: existing, replayed: true }));
      return new Promise((resolve) => waiting.set(id, [...(waiting.get(id) ?? []), resolve]));
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
      batch.push(p);
      pendingById.set(id, p);
      if (batch.length >= maxBatch) flush();
      else if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
    });
  }

  const corrupt = (ref: string) =>
    log('warn', 'mesh store: skipped a message whose size does not add up', { ref });

  return {
    kind: 'sqlite',
    limits,
    hasProject: async (name) => next.has(name),
    getProject: async (name) => getProject(name),

    async createProject(input) {
      const checked = checkProjectInput(input);
      if (!checked.ok) return checked;
      const { name, displayName, description, createdByCwd } = checked.result;
      if (next.has(name)) return fail('project-conflict', `project ${name} already exists`);
      const epoch = newEpoch();
      db.query(
        'INSERT INTO projects (name, display_name, description, created_by_cwd, created_at, next_sequence, epoch) VALUES (?,?,?,?,?,1,?)',
      ).run(name, displayName, description, createdByCwd, now(), epoch);
      next.set(name, 1);
      epochs.set(name, epoch);
      return ok(getProject(name)!);
    },

    async listProjects() {
      return (
        db.query('SELECT * FROM projects ORDER BY name').all() as Parameters<typeof projectOf>[0][]
      ).map(projectOf);
    },

    async deleteProject(name) {
      flush();
      if (!next.has(name)) return false;
      db.transaction(() => {
        db.query('DELETE FROM messages WHERE project = ?').run(name);
        db.query('DELETE FROM projects WHERE name = ?').run(name);
      })();
      next.delete(name);
      epochs.delete(name);
      return true;
    },

    append,

    async get(ref) {
      const r = parseRef(ref);
      const row = r && (byRef.get(r.project, r.sequence) as MessageRow | null);
      return row ? rowToMessage(row) : undefined;
    },

    history: async (q: HistoryQuery) => runHistory(db, q, limits, corrupt),

    async position(project) {
      const n = next.get(project);
      if (n === undefined) return undefined;
      flush();
      return { epoch: epochs.get(project)!, sequence: next.get(project)! - 1 };
    },

    missed: async (project, name, since, limit) =>
      runMissed(db, { project, name, since, limit }, limits, corrupt),

    async range(project, after, upTo, presenceIds) {
      const rows = inRange.all(project, after, upTo, JSON.stringify(presenceIds)) as MessageRow[];
      return pageRows(rows, 'ASC', { historyBudgetBytes: Number.MAX_SAFE_INTEGER }, corrupt);
    },

    count: async (project) =>
      (
        db.query('SELECT count(*) AS n FROM messages WHERE project = ?').get(project) as {
          n: number;
        }
      ).n,

    ready() {
      db.query('SELECT 1').get();
      return true;
    },

    flush: async () => flush(),

    async close() {
      flush();
      db.close();
    },
  };
}
