/**
 * @module lib/a2a/engine/recovery — what a node does at start with the tasks a crash left `submitted` or
 * `working`: no turn of this process runs them, so each is failed with a reason (and its webhooks
 * get the final event), unless the agent says it can resume it (the hub's delegations, which the
 * executor keeps running and a read advances).
 */

import { failureParts } from '../../errors/as-data.ts';
import type { Log } from '../../log.ts';
import type { TaskRecord } from '../store/task-store.ts';
import { appendEvent, DEFAULT_EVENT_LOG, type EventLogBound } from '../store/event-log.ts';
import { nextGeneration } from './task-rules.ts';
import {
  nowIso,
  type Message,
  type PushConfig,
  type Task,
  type TaskEvent,
  type TaskState,
} from '../types.ts';

/** States only a running agent turn moves on; after a restart nobody does. */
const LEFT_BY_A_CRASH: readonly TaskState[] = ['submitted', 'working'];

/** The code a task failed by a restart carries in its status message (declared in lib/errors/hub.ts). */
const INTERRUPTED_CODE = 'TASK_INTERRUPTED';
/** Stored in the task's metadata: the state a restart found the task in, and when it failed it. */
const RECOVERY_KEY = 'recovery';

export interface RecoveryOptions {
  /** The embedded store: one process per node, so whatever it finds running, nobody runs. */
  store: {
    runningIds(): string[];
    get(id: string): TaskRecord | undefined;
    save(rec: TaskRecord, event?: TaskEvent): Promise<void>;
  };
  log: Log;
  /** True keeps a task as the crash left it, for the agent to advance later; absent = fail all. */
  resumes?: (task: Readonly<Task>) => boolean;
  /** Webhook delivery (the engine's PushSender). */
  push?: { notify(configs: readonly PushConfig[], event: TaskEvent): void };
  now?: () => number;
  /** How much of a task's events its log keeps (default LIMITS). */
  eventLog?: EventLogBound;
}

export interface RecoveryReport {
  failed: string[];
  resumed: string[];
}

/**
 * Fails (or leaves for the agent) every task a previous process left running. Runs once, when
 * the store opens and before anything is served; the changes are visible at once and written in
 * the background (`store.flush()` waits for them).
 */
export function recoverInterrupted(opts: RecoveryOptions): RecoveryReport {
  const report: RecoveryReport = { failed: [], resumed: [] };
  // Every id first, from the index (failing a task changes what it lists).
  const ids = opts.store.runningIds();
  for (const id of ids) {
    const rec = opts.store.get(id);
    if (!rec || !LEFT_BY_A_CRASH.includes(rec.task.status.state)) continue;
    if (opts.resumes?.(rec.task)) {
      report.resumed.push(id);
      continue;
    }
    const task = rec.task;
    const previous = task.status.state;
    const at = nowIso(opts.now);
    const note: Message = {
      messageId: crypto.randomUUID(),
      role: 'agent',
      parts: failureParts({
        code: INTERRUPTED_CODE,
        message: `The node restarted while the task was ${previous}; send the request again as a new task.`,
      }),
      contextId: task.contextId,
      taskId: task.id,
    };
    task.status = { state: 'failed', timestamp: at, message: note };
    const generation = nextGeneration(task);
    task.history.push(note);
    task.metadata = { ...task.metadata, [RECOVERY_KEY]: { previousState: previous, failedAt: at } };
    const event = {
      kind: 'status' as const,
      taskId: task.id,
      contextId: task.contextId,
      status: task.status,
      final: true,
      generation,
    };
    // The failure joins the task's event log in the same write: a stream resuming replays it.
    appendEvent(rec, event, opts.eventLog ?? DEFAULT_EVENT_LOG);
    opts.store.save(rec).catch(() => {}); // the store logs a failed write; the next start retries
    if (rec.push.length) opts.push?.notify(rec.push, event);
    report.failed.push(id);
  }
  if (report.failed.length || report.resumed.length)
    opts.log('warn', 'tasks interrupted by a restart', {
      failed: report.failed.length,
      resumed: report.resumed.length,
    });
  return report;
}

/** Whether a restart failed this task (a subscription to it gets its final state and ends). */
export function failedByRestart(task: Readonly<Task>): boolean {
  return task.status.state === 'failed' && typeof task.metadata?.[RECOVERY_KEY] === 'object';
}
