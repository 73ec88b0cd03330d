/**
 * @module lib/limits — the bounds of every buffer, cache and store of a node and the hub, their
 * defaults, and the environment variables an operator sets them with (read by the entry files
 * only; everything else takes them as options). docs/limits.md lists each with the error past it.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

export const LIMITS = Object.freeze({
  /** Bytes one SSE client may fall behind before its stream is ended with `STREAM_TOO_SLOW`. */
  sseQueueBytes: 1 * MiB,
  /** Open SSE streams one process serves; one more is refused with `STREAMS_FULL` (503). */
  sseStreams: 512,
  /** Open SSE streams of one principal; one more is refused with `PRINCIPAL_STREAMS_FULL` (503). */
  sseStreamsPerPrincipal: 16,
  /**
   * Agent turns one principal may have running on a node at once (all anonymous callers are one);
   * one more send is refused with `TOO_MANY_TURNS` (429).
   */
  turnsPerPrincipal: 32,
  /** How long a GetTask with `currentGeneration` (A2A 1.1's long-poll) waits at most, in ms. */
  longPollMs: 30_000,
  /** Long-polls one process holds at once; one more is refused with `LONG_POLLS_FULL` (503). */
  longPolls: 10_000,
  /** Long-polls one principal holds at once (anonymous callers are one): `TOO_MANY_LONG_POLLS` (429). */
  longPollsPerPrincipal: 100,
  /** Hours a SendMessage's `messageId` is remembered, so a retry returns the task it made. */
  retryWindowHours: 24,
  /** `messageId`s remembered for retries per node (the oldest are forgotten first). */
  retryMessages: 100_000,
  /** Full task records kept in memory (the rest are read back from their files). */
  taskCacheEntries: 2_000,
  /** Total size of the task records kept in memory, as stored JSON. */
  taskCacheBytes: 64 * MiB,
  /** Messages a task's history keeps (the oldest are dropped first). */
  taskHistoryMessages: 200,
  /** Bytes of JSON a task's history keeps (the oldest are dropped first; the newest always stays). */
  taskHistoryBytes: 4 * MiB,
  /**
   * Events a task's event log keeps for streams that resume (lib/a2a/store/event-log.ts); past
   * it the oldest are dropped, and a cursor before what is kept gets the task itself first.
   */
  taskEventLogEvents: 256,
  /** Bytes of JSON a task's event log keeps; the oldest events are dropped first, the newest always stays. */
  taskEventLogBytes: 256 * KiB,
  /** Artifacts one task may hold; one more fails the task with `TASK_TOO_LARGE`. */
  taskArtifacts: 64,
  /** Bytes of JSON a task's artifacts may hold; more fails the task with `TASK_TOO_LARGE`. */
  taskArtifactBytes: 16 * MiB,
  /** JSON one `ListTasks` page carries past its first task, about; the page ends early past it. */
  taskListPageBytes: 16 * MiB,
  /** Tasks a node keeps on disk; past it the oldest terminal ones are deleted (never one in progress). */
  taskMaxStored: 100_000,
  /** Age of the oldest terminal task a node keeps, in hours. */
  taskMaxAgeHours: 720,
  /**
   * Bytes of task records (each task's newest) the task log keeps; past it the oldest terminal
   * tasks are deleted, and while tasks in progress hold it new tasks are refused
   * (`TASK_STORE_FULL`), as they are while its segments on disk pass twice it.
   */
  taskMaxBytes: 2048 * MiB,
  /** Size past which the task log begins a new segment. */
  taskLogSegmentBytes: 64 * MiB,
  /** Job records the executor keeps; past it the oldest finished ones are deleted (never a running one). */
  jobMaxStored: 10_000,
  /** Age of the oldest finished job record the executor keeps, in hours. */
  jobMaxAgeHours: 720,
  /** Negotiation records the hub keeps; past it the oldest are deleted. */
  negotiationMaxStored: 10_000,
  /** Age of the oldest negotiation record the hub keeps, in hours. */
  negotiationMaxAgeHours: 720,
  /** Rows the call trace keeps (the oldest are deleted first). */
  traceMaxRows: 100_000,
  /** Age of the oldest call trace row kept, in hours. */
  traceMaxAgeHours: 24 * 7,
  /** Accepted peer nonces remembered for replay protection. */
  peerNonces: 100_000,
  // The gRPC port's bounds: settings `grpc.*` (lib/config/settings-table.ts), not variables here.
  /** gRPC connections one process holds; one more is closed at once. */
  grpcConnections: 512,
  /** gRPC connections one client address holds; one more is closed at once. */
  grpcConnectionsPerAddress: 64,
  /** Time a new gRPC connection has to send the HTTP/2 preface and its SETTINGS. */
  grpcHandshakeMs: 10_000,
  /** Time a gRPC connection with no call open is kept (as Bun.serve's idleTimeout on HTTP). */
  grpcIdleMs: 60_000,
  /** Time a gRPC call has to send its whole request message (`GRPC_MESSAGE_TIMEOUT` past it). */
  grpcMessageMs: 30_000,
  /** Time an ended gRPC call's reader has to take the rest before the stream is cut. */
  grpcFinalGraceMs: 30_000,
  /** gRPC calls one HTTP/2 connection may have open (SETTINGS_MAX_CONCURRENT_STREAMS). */
  grpcStreamsPerConnection: 100,
});

export type Limits = { readonly [K in keyof typeof LIMITS]: number };

/** The settable limits by environment variable name. */
const LIMIT_ENV = Object.freeze({
  SSE_QUEUE_BYTES: 'sseQueueBytes',
  SSE_MAX_STREAMS: 'sseStreams',
  SSE_MAX_STREAMS_PER_PRINCIPAL: 'sseStreamsPerPrincipal',
  A2A_MAX_TURNS_PER_PRINCIPAL: 'turnsPerPrincipal',
  A2A_LONG_POLL_MS: 'longPollMs',
  A2A_MAX_LONG_POLLS: 'longPolls',
  A2A_MAX_LONG_POLLS_PER_PRINCIPAL: 'longPollsPerPrincipal',
  A2A_RETRY_WINDOW_HOURS: 'retryWindowHours',
  A2A_RETRY_MESSAGES: 'retryMessages',
  TASK_CACHE_ENTRIES: 'taskCacheEntries',
  TASK_CACHE_BYTES: 'taskCacheBytes',
  TASK_HISTORY_MESSAGES: 'taskHistoryMessages',
  TASK_HISTORY_BYTES: 'taskHistoryBytes',
  TASK_EVENT_LOG_EVENTS: 'taskEventLogEvents',
  TASK_EVENT_LOG_BYTES: 'taskEventLogBytes',
  TASK_ARTIFACTS: 'taskArtifacts',
  TASK_ARTIFACT_BYTES: 'taskArtifactBytes',
  TASK_LIST_PAGE_BYTES: 'taskListPageBytes',
  TASK_MAX_STORED: 'taskMaxStored',
  TASK_MAX_AGE_HOURS: 'taskMaxAgeHours',
  TASK_MAX_BYTES: 'taskMaxBytes',
  TASK_LOG_SEGMENT_BYTES: 'taskLogSegmentBytes',
  JOB_MAX_STORED: 'jobMaxStored',
  JOB_MAX_AGE_HOURS: 'jobMaxAgeHours',
  NEGOTIATION_MAX_STORED: 'negotiationMaxStored',
  NEGOTIATION_MAX_AGE_HOURS: 'negotiationMaxAgeHours',
  TRACE_MAX_ROWS: 'traceMaxRows',
  TRACE_MAX_AGE_HOURS: 'traceMaxAgeHours',
  PEER_NONCES: 'peerNonces',
} as const satisfies Record<string, keyof Limits>);

/** Reads the settable limits from the environment; a value that is not a positive integer is refused with its name. */
export function limitsFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; value: Limits } | { ok: false; message: string } {
  const set = positiveIntegersFromEnv(env, LIMIT_ENV, 15);
  return set.ok ? { ok: true, value: { ...LIMITS, ...set.value } } : set;
}

/**
 * The positive integers a table of environment variables (name → key) sets, at most `maxDigits`
 * digits each; the first malformed one is the error, naming the variable. Unset or empty is unset.
 */
export function positiveIntegersFromEnv<K extends string>(
  env: Record<string, string | undefined>,
  table: Readonly<Record<string, K>>,
  maxDigits: number,
): { ok: true; value: Partial<Record<K, number>> } | { ok: false; message: string } {
  const out: Partial<Record<K, number>> = {};
  const digits = new RegExp(`^[1-9][0-9]{0,${maxDigits - 1}}$`);
  for (const [name, key] of Object.entries(table)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (!digits.test(raw))
      return {
        ok: false,
        message: `${name} must be a positive integer, got ${JSON.stringify(raw.slice(0, 40))}`,
      };
    out[key] = Number(raw);
  }
  return { ok: true, value: out };
}

/** Size of stored text in UTF-8 bytes (not characters), the measure every byte limit uses. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Size of a value as JSON in UTF-8 bytes, the measure every byte limit uses. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}
