/**
 * @module mesh/store — the mesh's durable record on bun:sqlite: the project registry and the
 * append-only message history with per-project gap-free sequences. Appends are checked and given
 * their sequence at once, then committed in groups (one transaction per event-loop turn), and each
 * append's promise resolves only after its group is committed.
 */

import type { Database } from 'bun:sqlite';
import { fail, ok, type MeshError, type Result } from './errors.ts';
import { runHistory, runMissed, type HistoryQuery, type Missed } from './history.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { isMessageId, isProjectName, isRosterName } from './names.ts';
import { validateContent, type Attachment, type TextPayload } from './payload.ts';
import { formatRef, parseRef } from './ref.ts';
import { fingerprint, messageToValues, normalizeAttachments, normalizePayload, rowToMessage, type MessageRow } from './rows.ts';
import { MESH_SCHEMA, migrateMeshSchema } from './schema.ts';
import type { MeshMessage, Peer, Target } from './wire.ts';
import type { Log } from '../log.ts';

export interface Project {
  name: string;
  displayName?: string;
  description?: string;
  createdByCwd?: string;
  createdAt: number;
}

/** A message as a sender proposes it; everything but `from` and `project` is unchecked input. */
export interface MessageDraft {
  project: string;
  from: Peer;
  messageId: unknown;
  target: Target;
  payload: unknown;
  attachments: unknown;
  replyTo?: unknown;
}

export type AppendCode = 'unknown_project' | 'message_id_conflict' | 'unknown_reply' | 'payload_too_large' | 'message_rejected' | 'recipient_not_present';
export interface Appended {
  message: MeshMessage;
  /** True when the id was already stored with the same content: nothing new was written. */
  replayed: boolean;
}

export interface MeshStoreOptions {
  db: Database;
  now?: () => number;
  log: Log;
  limits?: Partial<MeshLimits>;
  /** Runs a group commit later; defaults to `setImmediate` (after the current turn's frames). */
  schedule?: (fn: () => void) => void;
  /** A group this large commits at once. */
  maxBatch?: number;
}

type Pending = { message: MeshMessage; values: ReturnType<typeof messageToValues>; done: (r: Result<Appended, AppendCode>) => void };

export type MeshStore = ReturnType<typeof createMeshStore>;

/** Creates the store on an open database (the schema is applied if missing). */
export function createMeshStore(opts: MeshStoreOptions) {
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
  for (const r of db.query('SELECT name, next_sequence, epoch FROM projects').all() as { name: string; next_sequence: number; epoch: string }[]) {
    next.set(r.name, r.next_sequence);
    epochs.set(r.name, r.epoch);
  }

  const insert = db.query('INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)');
  const setNext = db.query('UPDATE projects SET next_sequence = ? WHERE name = ?');
  const byId = db.query('SELECT * FROM messages WHERE msg_id = ?');
  const byRef = db.query('SELECT * FROM messages WHERE project = ? AND sequence = ?');
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
      for (const r of db.query('SELECT name, next_sequence FROM projects').all() as { name: string; next_sequence: number }[]) next.set(r.name, r.next_sequence);
    }
    for (const p of items) {
      pendingById.delete(p.message.messageId);
      const r: Result<Appended, AppendCode> = error ? { ok: false, error } : ok({ message: p.message, replayed: false });
      p.done(r);
      for (const w of waiting.get(p.message.messageId) ?? []) w(error ? r : ok({ message: p.message, replayed: true }));
      waiting.delete(p.message.messageId);
    }
  }

  function getProject(name: string): Project | undefined {
    const r = db.query('SELECT * FROM projects WHERE name = ?').get(name) as Record<string, string | number | null> | null;
    if (!r) return undefined;
    const p: Project = { name: r.name as string, createdAt: r.created_at as number };
    if (r.display_name !== null) p.displayName = r.display_name as string;
    if (r.description !== null) p.description = r.description as string;
    if (r.created_by_cwd !== null) p.createdByCwd = r.created_by_cwd as string;
    return p;
  }

  return {
    limits,
    hasProject: (name: string): boolean => next.has(name),
    getProject,

    /** Creates a project; its sequence starts at 1. */
    createProject(input: unknown): Result<Project, 'A2A_BAD_REQUEST' | 'project-conflict'> {
      if (!input || typeof input !== 'object') return fail('A2A_BAD_REQUEST', 'body must be an object');
      const { name, displayName, description, createdByCwd } = input as Record<string, unknown>;
      if (!isProjectName(name)) return fail('A2A_BAD_REQUEST', 'name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$');
      for (const [k, v] of Object.entries({ displayName, description, createdByCwd }))
        if (v !== undefined && (typeof v !== 'string' || v.length > 1024)) return fail('A2A_BAD_REQUEST', `${k} must be a string of at most 1024 characters`);
      if (next.has(name)) return fail('project-conflict', `project ${name} already exists`);
      const createdAt = now();
      const epoch = Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString('base64url');
      db.query('INSERT INTO projects (name, display_name, description, created_by_cwd, created_at, next_sequence, epoch) VALUES (?,?,?,?,?,1,?)').run(
        name,
        (displayName as string | undefined) ?? null,
        (description as string | undefined) ?? null,
        (createdByCwd as string | undefined) ?? null,
        createdAt,
        epoch,
      );
      next.set(name, 1);
      epochs.set(name, epoch);
      return ok(getProject(name)!);
    },

    listProjects(): Project[] {
      return (db.query('SELECT name FROM projects ORDER BY name').all() as { name: string }[]).map((r) => getProject(r.name)!);
    },

    /** Deletes a project with its messages and sequence (a new project of that name starts at 1 again). */
    deleteProject(name: string): boolean {
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

    /**
     * Appends a message. Checks run in order: content, reply, id (a retry with the same content
     * answers the stored original), then `admit` (e.g. "is the recipient present"), then a
     * sequence is allocated. Resolves once the message is committed.
     */
    append(draft: MessageDraft, admit?: () => MeshError<AppendCode> | undefined): Promise<Result<Appended, AppendCode>> {
      const done = (r: Result<Appended, AppendCode>) => Promise.resolve(r);
      if (!next.has(draft.project)) return done(fail('unknown_project', `project ${draft.project} does not exist`));
      if (!isMessageId(draft.messageId)) return done(fail('message_rejected', 'messageId must match ^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$'));
      if (draft.target.type === 'agent' && !isRosterName(draft.target.name)) return done(fail('message_rejected', 'target name is not a valid roster name'));
      const size = validateContent(draft.payload, draft.attachments, limits);
      if (!size.ok) return done(size);
      let replySeq: number | null = null;
      if (draft.replyTo !== undefined && draft.replyTo !== null) {
        const ref = parseRef(draft.replyTo);
        if (!ref) return done(fail('message_rejected', 'replyTo must be a message reference like project:12'));
        if (ref.project !== draft.project || ref.sequence >= (next.get(draft.project) ?? 1))
          return done(fail('unknown_reply', `no message ${String(draft.replyTo)} in project ${draft.project}`));
        replySeq = ref.sequence;
      }
      const id = draft.messageId;
      const candidate = {
        project: draft.project,
        from: draft.from,
        target: draft.target,
        payload: normalizePayload(draft.payload as TextPayload),
        attachments: normalizeAttachments((draft.attachments ?? []) as Attachment[]),
        ...(replySeq !== null ? { replyTo: formatRef(draft.project, replySeq) } : {}),
      };
      const pending = pendingById.get(id);
      const existing = pending?.message ?? (() => {
        const row = byId.get(id) as MessageRow | null;
        return row ? rowToMessage(row) : undefined;
      })();
      if (existing) {
        if (fingerprint(existing) !== fingerprint(candidate)) return done(fail('message_id_conflict', `messageId ${id} is already used for different content`));
        if (!pending) return done(ok({ message: existing, replayed: true }));
        return new Promise((resolve) => waiting.set(id, [...(waiting.get(id) ?? []), resolve]));
      }
      const refused = admit?.();
      if (refused) return done({ ok: false, error: refused });
      const sequence = next.get(draft.project)!;
      next.set(draft.project, sequence + 1);
      const message: MeshMessage = {
        messageId: id,
        messageRef: formatRef(draft.project, sequence),
        project: draft.project,
        sequence,
        from: { name: draft.from.name, presenceId: draft.from.presenceId },
        target: candidate.target,
        payload: candidate.payload,
        attachments: candidate.attachments,
        createdAt: now(),
        ...(candidate.replyTo ? { replyTo: candidate.replyTo } : {}),
      };
      return new Promise((resolve) => {
        const p: Pending = { message, values: messageToValues(message, size.result, replySeq), done: resolve };
        batch.push(p);
        pendingById.set(id, p);
        if (batch.length >= maxBatch) flush();
        else if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },

    /** Reads one committed message by reference. */
    get(ref: string): MeshMessage | undefined {
      const r = parseRef(ref);
      const row = r && (byRef.get(r.project, r.sequence) as MessageRow | null);
      return row ? rowToMessage(row) : undefined;
    },

    history(q: HistoryQuery): MeshMessage[] {
      return runHistory(db, q, limits, (ref) => log('warn', 'mesh store: skipped a message whose size does not add up', { ref }));
    },

    /**
     * Where a project's stream stands: its epoch and the last sequence handed out. Commits the open
     * group first, so everything up to `sequence` can be read back (recovery relies on that).
     */
    position(project: string): { epoch: string; sequence: number } | undefined {
      const n = next.get(project);
      if (n === undefined) return undefined;
      flush();
      return { epoch: epochs.get(project)!, sequence: next.get(project)! - 1 };
    },

    /**
     * What `name` missed in `project` after sequence `since`: messages addressed to it and broadcasts
     * by others, newest `limit` at most (and within the history budget), in ascending order.
     * Call `position` first so the open group is committed.
     */
    missed(project: string, name: string, since: number, limit: number): Missed {
      return runMissed(db, { project, name, since, limit }, limits, (ref) => log('warn', 'mesh store: skipped a message whose size does not add up', { ref }));
    },

    /** Number of messages stored for a project (for status lines). */
    count(project: string): number {
      return (db.query('SELECT count(*) AS n FROM messages WHERE project = ?').get(project) as { n: number }).n;
    },

    flush,

    /** Commits what is pending and closes the database. */
    close(): void {
      flush();
      db.close();
    },
  };
}
