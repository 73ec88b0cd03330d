/**
 * @module lib/mcp/tasks — the task table of MCP's tasks extension (`io.modelcontextprotocol/tasks`,
 * MCP 2026-07-28): a tool call the server chose to run as a task is a record here, owned by the
 * principal that made it, with its status (`working`, `input_required`, `completed`, `failed`,
 * `cancelled`), the input it waits for, and once terminal its result or JSON-RPC error. Bounded:
 * at most `tasks` records and `tasksPerPrincipal` per owner (past either the oldest finished one
 * goes, else a new task is refused), each kept `taskTtlMs` from its creation, then deleted, its
 * work aborted if it still runs. Everything said about a task is read from its record: a stranger's
 * id and an unknown one are alike (undefined). What the methods answer is lib/mcp/task-methods.ts.
 */

import { randomUUID } from 'node:crypto';
import { fail, ok, type Result } from '../errors/result.ts';
import { isPlainObject } from '../json/guards.ts';
import { jsonBytes } from '../limits.ts';
import type { AskFailure, InputRequest } from './exchange.ts';
import type { McpLimits } from './limits.ts';
import type { InputRequiredResult, ToolResult } from './protocol.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Why a task's work is aborted (`run.signal.reason`): the client cancelled it, or it is deleted (TTL, room). */
const TASK_CANCELLED = 'cancelled';
export const TASK_GONE = 'deleted';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** What a task's work may do while it runs. */
export interface TaskRun {
  /**
   * Aborted when the task is cancelled (reason TASK_CANCELLED) or deleted (TASK_GONE), or, run
   * inline, when the client goes away.
   */
  readonly signal: AbortSignal;
  /**
   * The client's answers to `requests`, by key. As a task: the task is `input_required` until
   * every one is answered through `tasks/update`. Run inline: as lib/mcp/exchange.ts `gather`.
   */
  gather(
    requests: Record<string, InputRequest>,
    statusMessage?: string,
  ): Promise<Result<Record<string, unknown>, AskFailure> | InputRequiredResult>;
  /** The task's `statusMessage` while it works (nothing when run inline). */
  say(statusMessage: string): void;
}

export type TaskWork = (run: TaskRun) => Promise<ToolResult | InputRequiredResult>;

/**
 * A tool's offer to run as a task: a client that negotiated the extension gets a task; any other
 * gets `inline` (or the work run inline), or, when `required`, -32021.
 */
export interface TaskOffer {
  task: TaskWork;
  inline?: () => Promise<ToolResult | InputRequiredResult>;
  required?: boolean;
}

export const isTaskOffer = (v: unknown): v is TaskOffer =>
  isPlainObject(v) && typeof v.task === 'function';

/** A task as `tasks/get` shows it (DetailedTask). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  inputRequests?: Record<string, InputRequest>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

interface Stored {
  id: string;
  owner: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  updatedAt: number;
  result?: Record<string, unknown>;
  error?: TaskView['error'];
  /** Outstanding input requests by the key minted for them; their answers as they come. */
  pending: Map<string, InputRequest>;
  answers: Map<string, unknown>;
  keys: number;
  wake?: () => void;
  abort: AbortController;
  timer: ReturnType<typeof setTimeout>;
}

type TaskLimits = Pick<
  McpLimits,
  'tasks' | 'tasksPerPrincipal' | 'taskTtlMs' | 'taskPollMs' | 'taskResultBytes'
>;

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);
const iso = (ms: number) => new Date(ms).toISOString();

/** The capability a request to the client needs (as lib/mcp/exchange.ts checks it). */
const NEEDS: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

const INTERNAL = (message = 'Internal error') => ({
  code: -32603,
  message,
  data: { code: 'INTERNAL' },
});

// long: one closure over the table (records, bounds, the waits of their work)
export function createTaskTable(limits: TaskLimits, now: () => number = Date.now) {
  const byId = new Map<string, Stored>();

  const touch = (t: Stored, status: TaskStatus, message?: string) => {
    t.status = status;
    if (message !== undefined) t.statusMessage = message;
    t.updatedAt = now();
  };

  function drop(t: Stored): void {
    clearTimeout(t.timer);
    byId.delete(t.id);
    t.abort.abort(TASK_GONE);
    t.wake?.();
  }

  /** Makes room for one more task of `owner`: the oldest finished one goes; false when none can. */
  function room(
    owner: string,
  ): Result<true, { code: 'MCP_TOO_MANY_TASKS' | 'MCP_TASKS_FULL'; message: string }> {
    for (const t of [...byId.values()]) expired(t);
    const oldestDone = (of?: string) =>
      [...byId.values()].find(
        (t) => TERMINAL.has(t.status) && (of === undefined || t.owner === of),
      );
    const mine = [...byId.values()].filter((t) => t.owner === owner).length;
    if (mine >= limits.tasksPerPrincipal) {
      const gone = oldestDone(owner);
      if (!gone)
        return fail(
          'MCP_TOO_MANY_TASKS',
          `at most ${limits.tasksPerPrincipal} unfinished tasks per principal; cancel one or wait`,
        );
      drop(gone);
    }
    if (byId.size >= limits.tasks) {
      const gone = oldestDone();
      if (!gone) return fail('MCP_TASKS_FULL', `the server runs ${limits.tasks} tasks already`);
      drop(gone);
    }
    return ok(true);
  }

  function settle(t: Stored, outcome: ToolResult | InputRequiredResult | Error): void {
    if (TERMINAL.has(t.status) || !byId.has(t.id)) return;
    t.pending.clear();
    if (outcome instanceof Error || 'resultType' in outcome) {
      t.error = INTERNAL();
      touch(t, 'failed', 'the task failed with an internal error');
    } else if (jsonBytes(outcome) > limits.taskResultBytes) {
      t.error = {
        ...INTERNAL(`the result is over ${limits.taskResultBytes} bytes`),
        data: { code: 'MCP_TASK_RESULT_TOO_LARGE' },
      };
      touch(t, 'failed', 'the result was too large to keep');
    } else {
      t.result = outcome as unknown as Record<string, unknown>;
      touch(t, 'completed');
    }
  }

  function runOf(t: Stored, capabilities: Record<string, unknown>): TaskRun {
    return {
      signal: t.abort.signal,
      say: (message) => {
        if (!TERMINAL.has(t.status)) touch(t, t.status, message.slice(0, 512));
      },
      async gather(requests, statusMessage) {
        const cannot = Object.values(requests).find(
          (r) => NEEDS[r.method] && !isPlainObject(capabilities[NEEDS[r.method]!]),
        );
        if (cannot)
          return fail(
            'MCP_CLIENT_CANNOT',
            `the client did not declare the capability ${cannot.method} needs`,
          );
        const minted = new Map<string, string>();
        for (const [k, r] of Object.entries(requests)) {
          const key = `${k}-${++t.keys}`;
          minted.set(key, k);
          t.pending.set(key, r);
        }
        touch(t, 'input_required', statusMessage ?? 'waiting for the client’s input');
        while (t.pending.size > 0 && !t.abort.signal.aborted)
          await new Promise<void>((resolve) => (t.wake = resolve));
        t.wake = undefined;
        if (t.abort.signal.aborted) return fail('MCP_CLIENT_REFUSED', 'the task was cancelled');
        const got: Record<string, unknown> = {};
        for (const [key, k] of minted) got[k] = t.answers.get(key);
        for (const key of minted.keys()) t.answers.delete(key);
        delete t.statusMessage;
        touch(t, 'working');
        return ok(got);
      },
    };
  }

  const viewOf = (t: Stored, detailed: boolean): TaskView => ({
    taskId: t.id,
    status: t.status,
    ...(t.statusMessage ? { statusMessage: t.statusMessage } : {}),
    createdAt: iso(t.createdAt),
    lastUpdatedAt: iso(t.updatedAt),
    ttlMs: limits.taskTtlMs,
    pollIntervalMs: limits.taskPollMs,
    ...(detailed && t.status === 'input_required'
      ? { inputRequests: Object.fromEntries(t.pending) }
      : {}),
    ...(detailed && t.status === 'completed' && t.result ? { result: t.result } : {}),
    ...(detailed && t.status === 'failed' && t.error ? { error: t.error } : {}),
  });

  /** Whether a task outlived its TTL (its timer may not have run yet): it is deleted. */
  const expired = (t: Stored) => {
    if (now() - t.createdAt < limits.taskTtlMs) return false;
    drop(t);
    return true;
  };

  const mine = (owner: string, id: string) => {
    const t = byId.get(id);
    return t && t.owner === owner && !expired(t) ? t : undefined;
  };

  return {
    /** Stores a new task of `owner` and starts its work; the seed state as stored, or why not. */
    start(
      owner: string,
      work: TaskWork,
      capabilities: Record<string, unknown>,
    ): Result<TaskView, { code: 'MCP_TOO_MANY_TASKS' | 'MCP_TASKS_FULL'; message: string }> {
      const made = room(owner);
      if (!made.ok) return made;
      const at = now();
      const t: Stored = {
        id: randomUUID(),
        owner,
        status: 'working',
        createdAt: at,
        updatedAt: at,
        pending: new Map(),
        answers: new Map(),
        keys: 0,
        abort: new AbortController(),
        timer: setTimeout(() => drop(t), limits.taskTtlMs),
      };
      t.timer.unref?.();
      byId.set(t.id, t);
      const seed = viewOf(t, false);
      const run = runOf(t, capabilities);
      void Promise.resolve()
        .then(() => work(run))
        .then(
          (r) => settle(t, r),
          (e) => settle(t, e instanceof Error ? e : new Error('task failed')),
        );
      return ok(seed);
    },

    /** The task as stored; undefined when `owner` has no task of that id. */
    get: (owner: string, id: string): TaskView | undefined => {
      const t = mine(owner, id);
      return t && viewOf(t, true);
    },

    /** Hands the task the answers to its outstanding requests (others are ignored); false: no such task. */
    update(owner: string, id: string, responses: Record<string, unknown>): boolean {
      const t = mine(owner, id);
      if (!t) return false;
      for (const [key, answer] of Object.entries(responses)) {
        if (!t.pending.has(key) || !isPlainObject(answer)) continue;
        t.pending.delete(key);
        t.answers.set(key, answer);
      }
      if (t.pending.size === 0) t.wake?.();
      return true;
    },

    /** Cancels an unfinished task (a finished one stays as it is); false: no such task. */
    cancel(owner: string, id: string): boolean {
      const t = mine(owner, id);
      if (!t) return false;
      if (TERMINAL.has(t.status)) return true;
      t.pending.clear();
      touch(t, 'cancelled', 'cancelled by the client');
      t.abort.abort(TASK_CANCELLED);
      t.wake?.();
      return true;
    },

    /** How many tasks are stored. */
    size: () => byId.size,

    /** Ends every task (the server stops). */
    close(): void {
      for (const t of [...byId.values()]) drop(t);
    },
  };
}

export type TaskTable = ReturnType<typeof createTaskTable>;
