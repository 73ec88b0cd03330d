/**
 * @module lib/mesh/store — the one interface of the mesh's durable record (the project registry and
 * the append-only message history with per-project gap-free sequences), and the checks both
 * implementations share: `sqlite-store.ts` (bun:sqlite, one hub) and `postgres-store.ts`
 * (PostgreSQL, several hubs on one database).
 */

import type { Log } from '../log.ts';
import { fail, ok, type MeshError, type Result } from './errors.ts';
import type { HistoryQuery, Missed } from './history.ts';
import { MESH_LIMITS, type MeshLimits } from './limits.ts';
import { isMessageId, isProjectName, isRosterName } from './names.ts';
import { validateContent, type Attachment, type TextPayload } from './payload.ts';
import { formatRef, parseRef } from './ref.ts';
import { normalizeAttachments, normalizePayload } from './rows.ts';
import type { MeshMessage, Peer, Target } from './wire.ts';

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

export type AppendCode =
  | 'unknown_project'
  | 'message_id_conflict'
  | 'unknown_reply'
  | 'payload_too_large'
  | 'message_rejected'
  | 'recipient_not_present';
export interface Appended {
  message: MeshMessage;
  /** True when the id was already stored with the same content: nothing new was written. */
  replayed: boolean;
}

/** Where a project's stream stands: its epoch (new when the project is recreated) and its last committed sequence. */
export interface StreamHead {
  epoch: string;
  sequence: number;
}

export type CreateProjectCode = 'A2A_BAD_REQUEST' | 'project-conflict';

/**
 * The mesh's durable record. Every call is asynchronous so that one interface fits an embedded
 * database and a server; appends are committed in groups and resolve only once committed.
 */
export interface MeshStore {
  /** `sqlite` or `postgres`, for status lines. */
  readonly kind: 'sqlite' | 'postgres';
  readonly limits: MeshLimits;
  hasProject(name: string): Promise<boolean>;
  getProject(name: string): Promise<Project | undefined>;
  /** Creates a project; its sequence starts at 1 under a new epoch. */
  createProject(input: unknown): Promise<Result<Project, CreateProjectCode>>;
  /** Every project, sorted by name. */
  listProjects(): Promise<Project[]>;
  /** Deletes a project with its messages (a new project of that name starts at 1 again). */
  deleteProject(name: string): Promise<boolean>;
  /**
   * Appends a message. Checks run in order: content, reply, id (a retry with the same content
   * answers the stored original), then `admit` (e.g. "is the recipient present"), then the message
   * joins the open group. Resolves once its group is committed, with its sequence.
   */
  append(
    draft: MessageDraft,
    admit?: () => MeshError<AppendCode> | undefined,
  ): Promise<Result<Appended, AppendCode>>;
  /** One committed message by reference (`project:12`). */
  get(ref: string): Promise<MeshMessage | undefined>;
  history(q: HistoryQuery): Promise<MeshMessage[]>;
  /** The project's stream head, after committing this store's open group (so everything up to it can be read). */
  position(project: string): Promise<StreamHead | undefined>;
  /**
   * What `name` missed in `project` after `since`: messages addressed to it and broadcasts by
   * others, the newest `limit` at most (and within the history budget), in ascending order.
   */
  missed(project: string, name: string, since: number, limit: number): Promise<Missed>;
  /**
   * The committed messages of `project` with `after < sequence <= upTo` that a hub may have to
   * deliver: broadcasts and messages addressed to one of `presenceIds`, ascending.
   */
  range(
    project: string,
    after: number,
    upTo: number,
    presenceIds: string[],
  ): Promise<MeshMessage[]>;
  /** Number of messages stored for a project. */
  count(project: string): Promise<number>;
  /**
   * For readiness checks, synchronously: true when the store can write, otherwise why not. On
   * PostgreSQL it is the outcome of the last commit or probe (a probe runs in the background).
   */
  ready(): true | string;
  /** Commits the open group now; resolves when it (and any commit in flight) is done. */
  flush(): Promise<void>;
  /** Commits what is pending and closes the database. */
  close(): Promise<void>;
}

/** The project registry's part of a store. */
export type ProjectRegistry = Pick<
  MeshStore,
  'hasProject' | 'getProject' | 'createProject' | 'listProjects' | 'deleteProject'
>;

/** The reads of committed messages, part of a store. */
export type StoreReads = Pick<MeshStore, 'get' | 'history' | 'missed' | 'range' | 'count'>;

/** A draft that passed the content checks: the normalized message without its sequence. */
export interface CheckedDraft {
  messageId: string;
  candidate: Pick<
    MeshMessage,
    'project' | 'from' | 'target' | 'payload' | 'attachments' | 'replyTo'
  >;
  contentBytes: number;
  /** The sequence `replyTo` names, when there is one (its existence is the store's to check). */
  replySeq: number | null;
}

/** The checks every store runs first, in order: id, target name, content, reply reference. */
export function checkDraft(
  draft: MessageDraft,
  limits: MeshLimits,
): Result<CheckedDraft, AppendCode> {
  if (!isMessageId(draft.messageId))
    return fail('message_rejected', 'messageId must match ^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$');
  if (draft.target.type === 'agent' && !isRosterName(draft.target.name))
    return fail('message_rejected', 'target name is not a valid roster name');
  const size = validateContent(draft.payload, draft.attachments, limits);
  if (!size.ok) return size;
  let replySeq: number | null = null;
  if (draft.replyTo !== undefined && draft.replyTo !== null) {
    const ref = parseRef(draft.replyTo);
    if (!ref)
      return fail('message_rejected', 'replyTo must be a message reference like project:12');
    if (ref.project !== draft.project) return unknownReply(draft);
    replySeq = ref.sequence;
  }
  return ok({
    messageId: draft.messageId,
    contentBytes: size.result,
    replySeq,
    candidate: {
      project: draft.project,
      from: draft.from,
      target: draft.target,
      payload: normalizePayload(draft.payload as TextPayload),
      attachments: normalizeAttachments((draft.attachments ?? []) as Attachment[]),
      ...(replySeq !== null ? { replyTo: formatRef(draft.project, replySeq) } : {}),
    },
  });
}

/** The `unknown_reply` refusal for a reply to a sequence the project does not have. */
export const unknownReply = (draft: MessageDraft) =>
  fail('unknown_reply', `no message ${String(draft.replyTo)} in project ${draft.project}`);

/** The `unknown_project` refusal for a message to a project that does not exist. */
export const unknownProject = (project: string) =>
  fail('unknown_project', `project ${project} does not exist`);

/** The `message_id_conflict` refusal for an id already used (or pending) with different content. */
export const idConflict = (id: string) =>
  fail('message_id_conflict', `messageId ${id} is already used for different content`);

/** What a retry of a message made while it was pending hears: the original's outcome, as a replay. */
export const asReplay = (r: Result<Appended, AppendCode>): Result<Appended, AppendCode> =>
  r.ok ? ok({ message: r.result.message, replayed: true }) : r;

/** A sender as stored: its name, presence and the principal the hub proved, when there is one. */
const peerFields = (p: Peer): Peer => ({
  name: p.name,
  presenceId: p.presenceId,
  ...(p.principal ? { principal: p.principal } : {}),
});

/**
 * The key a message id is unique under: ids are the sender's, unique within a project, so the
 * same id in another project is another message (and tells nothing about this one).
 */
export const idKey = (project: string, messageId: string): string => `${project}\n${messageId}`;

/** The message a checked draft becomes once it has its sequence. */
export function sequenced(c: CheckedDraft, sequence: number, createdAt: number): MeshMessage {
  const { candidate } = c;
  return {
    messageId: c.messageId,
    messageRef: formatRef(candidate.project, sequence),
    project: candidate.project,
    sequence,
    from: peerFields(candidate.from),
    target: candidate.target,
    payload: candidate.payload,
    attachments: candidate.attachments,
    createdAt,
    ...(candidate.replyTo ? { replyTo: candidate.replyTo } : {}),
  };
}

/** Checks the fields of a project to create; the name's uniqueness is the store's to check. */
export function checkProjectInput(input: unknown): Result<
  {
    name: string;
    displayName: string | null;
    description: string | null;
    createdByCwd: string | null;
  },
  'A2A_BAD_REQUEST'
> {
  if (!input || typeof input !== 'object') return fail('A2A_BAD_REQUEST', 'body must be an object');
  const { name, displayName, description, createdByCwd } = input as Record<string, unknown>;
  if (!isProjectName(name))
    return fail('A2A_BAD_REQUEST', 'name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$');
  for (const [k, v] of Object.entries({ displayName, description, createdByCwd }))
    if (v !== undefined && (typeof v !== 'string' || v.length > 1024))
      return fail('A2A_BAD_REQUEST', `${k} must be a string of at most 1024 characters`);
  return ok({
    name,
    displayName: (displayName as string | undefined) ?? null,
    description: (description as string | undefined) ?? null,
    createdByCwd: (createdByCwd as string | undefined) ?? null,
  });
}

/** A project row's fields as the API shows them (absent optional fields left out). */
export function projectOf(r: {
  name: string;
  display_name: string | null;
  description: string | null;
  created_by_cwd: string | null;
  created_at: number | string;
}): Project {
  const p: Project = { name: r.name, createdAt: Number(r.created_at) };
  if (r.display_name !== null) p.displayName = r.display_name;
  if (r.description !== null) p.description = r.description;
  if (r.created_by_cwd !== null) p.createdByCwd = r.created_by_cwd;
  return p;
}

/** A fresh stream epoch (72 random bits, base64url). */
export const newEpoch = (): string =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString('base64url');

/** What the parts of either store share: its log, clock and limits, and where an unreadable row is reported. */
export interface StoreBasics {
  log: Log;
  now: () => number;
  limits: MeshLimits;
  /** Reports a stored message whose recorded size does not add up (it is skipped). */
  corrupt: (ref: string) => void;
}

/** The basics of a store from its options (the clock defaults to `Date.now`, the limits to the mesh's). */
export function storeBasics(opts: {
  log: Log;
  now?: () => number;
  limits?: Partial<MeshLimits>;
}): StoreBasics {
  const { log } = opts;
  return {
    log,
    now: opts.now ?? Date.now,
    limits: { ...MESH_LIMITS, ...opts.limits },
    corrupt: (ref) =>
      log('warn', 'mesh store: skipped a message whose size does not add up', { ref }),
  };
}
