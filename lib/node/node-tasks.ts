/**
 * @module lib/node/node-tasks — a node's tasks: the store it keeps them in (the task log, JSON
 * Lines in its data folder, or a shared PostgreSQL database), the engine that runs them, and the settling of the tasks a crash
 * left running before anything is served.
 */

import { join } from 'node:path';
import { TaskEngine } from '../a2a/engine/engine.ts';
import type { TaskEvent } from '../a2a/types.ts';
import type { WebhookSender } from '../a2a/push/delivery.ts';
import type { Agent } from '../a2a/agent.ts';
import type { Principal } from '../auth/principal.ts';
import type { Log } from '../log.ts';
import type { TaskStore } from '../a2a/store/task-store.ts';
import { LogTaskStore } from '../a2a/store/log-store.ts';
import type * as PostgresStore from '../a2a/store/postgres-store.ts';
import type * as PostgresBook from '../a2a/store/postgres/retry-book.ts';
import { SqliteRetryBook, type RetryBook } from '../a2a/store/retry-book.ts';
import { recoverInterrupted } from '../a2a/engine/recovery.ts';
import type { Limits } from '../limits.ts';
import type { NodeMetrics } from './task-metrics.ts';

export interface NodeTasksOptions {
  name: string;
  dataDir: string;
  tasksDatabaseUrl?: string;
  agent: Agent;
  log: Log;
  limits: Limits;
  inputModes: string[];
  outputModes: string[];
  push?: WebhookSender;
  now?: () => number;
  mayAct: (caller: Principal) => boolean;
  /** The node's metrics: every task event, and the long-polls held. */
  metrics: NodeMetrics;
  /** Also sees every task event, after the metrics. */
  onEvent?: (event: TaskEvent) => void;
}

/** The node's task store: `<dataDir>/<name>/tasks/`, or the shared database when one is named. */
function openTaskStore(o: NodeTasksOptions): TaskStore {
  const { limits, log } = o;
  const bounds = {
    cacheSize: limits.taskCacheEntries,
    cacheBytes: limits.taskCacheBytes,
    maxStored: limits.taskMaxStored,
    maxAgeHours: limits.taskMaxAgeHours,
    listPageBytes: limits.taskListPageBytes,
  };
  // The PostgreSQL store's code, and Bun's SQL client under it, load only for a node that names
  // a database: an idle node on its task log need not hold them.
  if (o.tasksDatabaseUrl) {
    const { PostgresTaskStore } = require('../a2a/store/postgres-store.ts') as typeof PostgresStore;
    return new PostgresTaskStore({
      url: o.tasksDatabaseUrl,
      node: o.name,
      log,
      ...bounds,
      maxBytes: limits.taskMaxBytes,
    });
  }
  const embedded = {
    dir: join(o.dataDir, o.name, 'tasks'),
    log,
    ...bounds,
    now: o.now,
  };
  return LogTaskStore.open({
    ...embedded,
    segmentBytes: limits.taskLogSegmentBytes,
    maxBytes: limits.taskMaxBytes,
  });
}

/** The store and the engine over it, with the tasks a crash left running already settled. */
/** Where the node keeps new tasks' messageIds for retries: beside its tasks, or in its database. */
function openRetryBook(o: NodeTasksOptions): RetryBook {
  const bounds = {
    windowMs: o.limits.retryWindowHours * 3_600_000,
    max: o.limits.retryMessages,
    ...(o.now ? { now: o.now } : {}),
  };
  if (!o.tasksDatabaseUrl)
    return new SqliteRetryBook(join(o.dataDir, o.name, 'sent-messages.sqlite'), bounds);
  const { PostgresRetryBook } =
    require('../a2a/store/postgres/retry-book.ts') as typeof PostgresBook;
  return new PostgresRetryBook(o.tasksDatabaseUrl, o.name, bounds, o.log);
}

export function createNodeTasks(o: NodeTasksOptions): { store: TaskStore; engine: TaskEngine } {
  const { agent, push, limits, log } = o;
  const store = openTaskStore(o);
  const engine = new TaskEngine({
    store,
    agent,
    log,
    inputModes: o.inputModes,
    outputModes: o.outputModes,
    push,
    now: o.now,
    mayAct: o.mayAct,
    onEvent: o.onEvent ? (e) => (o.metrics.onTaskEvent(e), o.onEvent!(e)) : o.metrics.onTaskEvent,
    turnsPerPrincipal: limits.turnsPerPrincipal,
    retries: openRetryBook(o),
    longPolls: {
      // Under the HTTP server's idle timeout (60 s), which would cut a longer wait.
      waitMs: Math.min(limits.longPollMs, 55_000),
      max: limits.longPolls,
      perPrincipal: limits.longPollsPerPrincipal,
    },
    limits: {
      historyMessages: limits.taskHistoryMessages,
      historyBytes: limits.taskHistoryBytes,
      artifacts: limits.taskArtifacts,
      artifactBytes: limits.taskArtifactBytes,
      eventLogEvents: limits.taskEventLogEvents,
      eventLogBytes: limits.taskEventLogBytes,
    },
  });
  o.metrics.watchLongPolls(engine);
  // Tasks a crash left running are settled before anything is served (see lib/a2a/engine/recovery.ts).
  // A shared store has several processes per node; its engine takes over a gone process's tasks.
  if (store instanceof LogTaskStore)
    recoverInterrupted({
      store,
      log,
      ...(agent.resumes ? { resumes: (t) => agent.resumes!(t) } : {}),
      push,
      now: o.now,
      eventLog: { events: limits.taskEventLogEvents, bytes: limits.taskEventLogBytes },
    });
  return { store, engine };
}

/** Opens the store's connection, where it has one (the task log is open already). */
export async function openStore(store: TaskStore): Promise<void> {
  if (!(store instanceof LogTaskStore)) await (store as PostgresStore.PostgresTaskStore).open();
}
