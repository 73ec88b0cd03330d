/**
 * @module lib/mcp/limits — the bounds of an MCP server: sessions per process, how long an idle one
 * lives, the size of a request body and of one tool call's arguments, the messages waiting on
 * a session's stream, the server's own requests waiting on the client, and a session's resource
 * subscriptions, and the tasks kept (how many, how long, how large a result). docs/limits.md lists each with what a client meets past it.
 */

const KiB = 1024;

export const MCP_LIMITS = Object.freeze({
  /** Open sessions per process; one more `initialize` is refused (503 MCP_SESSIONS_FULL) once the idle ones are gone. */
  sessions: 256,
  /**
   * Open sessions of one principal (anonymous callers: one per address); at the cap its least recently used
   * session ends, so a harness that restarts without ending its session recycles its own, and no
   * one principal can fill the table.
   */
  sessionsPerPrincipal: 16,
  /** A session unused this long is ended; its id then answers 404 and the client initializes again. */
  sessionIdleMs: 30 * 60_000,
  /** Bytes of one POST body. */
  bodyBytes: 256 * KiB,
  /** Bytes of one tools/call's `arguments`, as JSON. */
  argumentBytes: 64 * KiB,
  /** Server messages waiting on a session's GET stream (or one answer's stream) before the stream is ended. */
  streamMessages: 256,
  /** Requests the server has sent one session's client (sampling, elicitation) and waits on. */
  pendingRequests: 16,
  /** How long the server waits for the client to answer one of its requests (a person may be asked). */
  clientAnswerMs: 5 * 60_000,
  /** Resource URIs one session (or one `subscriptions/listen` stream) may subscribe to. */
  subscriptions: 64,
  /** Open `subscriptions/listen` streams per process (2026-07-28); one more is 503 MCP_LISTENERS_FULL. */
  listeners: 256,
  /** Tasks (MCP tasks extension) kept per process, finished or not; past it the oldest finished goes, else MCP_TASKS_FULL. */
  tasks: 1024,
  /** Tasks one principal keeps; past it its oldest finished one goes, else MCP_TOO_MANY_TASKS. */
  tasksPerPrincipal: 32,
  /** How long a task is kept from its creation (its `ttlMs`); then it is deleted, its work aborted. */
  taskTtlMs: 60 * 60_000,
  /** The polling interval a task suggests (`pollIntervalMs`). */
  taskPollMs: 1_000,
  /** Bytes of one task's result kept (as JSON); a larger one makes the task `failed`. */
  taskResultBytes: 1024 * KiB,
  /** Open `subscriptions/listen` streams of one principal (anonymous callers: per address); one more is 429 MCP_TOO_MANY_LISTENERS. */
  listenersPerPrincipal: 8,
});

export type McpLimits = { readonly [K in keyof typeof MCP_LIMITS]: number };
