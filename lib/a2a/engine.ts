/**
 * @module a2a-engine — the task state machine (A2A task lifecycle): sends, continuation, blocking and
 * immediate answers, cancel, subscriptions and push configs. It runs the node's agent, applies
 * what the agent reports to the task, stores it, and fans each event out in order to every
 * subscriber and webhook. Protocol-version neutral: the wire modules translate.
 *
 * On a shared store (several processes of one node, lib/a2a/task-store-postgres.ts) the process
 * running a task's turn writes it; another process continues, cancels or changes a task it does
 * not run through the store's row-locked update, and its streams get the other processes' events
 * from the store (docs/scale-out.md).
 *
 * Each task is bounded: its history keeps the newest messages within a count and a byte cap, and
 * artifacts past their caps fail the task with `TASK_TOO_LARGE`.
 */

import { a2aError, isA2AError, type A2AError } from './errors.ts';
import {
  TERMINAL_STATES,
  isFinalState,
  nowIso,
  withHistoryLength,
  type Artifact,
  type ListTasksPage,
  type ListTasksQuery,
  type Message,
  type Part,
  type PushConfig,
  type ProtocolVersion,
  type SendParams,
  type Task,
  type TaskEvent,
  type TaskState,
} from './types.ts';
import type { Agent, AgentContext, ArtifactInput, TaskUpdater } from './agent.ts';
import { failureParts } from '../errors/as-data.ts';
import { EventQueue } from '../event-queue.ts';
import { LIMITS, jsonBytes } from '../limits.ts';
import type { Log } from '../log.ts';
import {
  creatorOf,
  newTaskId,
  type RemoteChange,
  type TaskCluster,
  type TaskRecord,
  type TaskStore,
} from './task-store.ts';
import { isAuthenticated, ownerKey, type Principal } from '../auth/principal.ts';
import { failedByRestart } from './recovery.ts';

/** Delivers task events to webhooks; see lib/a2a/push.ts. */
export interface PushSender {
  /** Why a webhook URL is refused, or null when it is allowed. */
  refuse(url: string): string | null;
  notify(configs: readonly PushConfig[], event: TaskEvent): void;
}

export interface EngineOptions {
  store: TaskStore;
  agent: Agent;
  log: Log;
  /** Media types the agent accepts (`type/*` wildcards allowed). */
  inputModes: readonly string[];
  outputModes: readonly string[];
  /** Webhook delivery; absent = push notifications not supported. */
  push?: PushSender;
  now?: () => number;
  /** Most webhook registrations one task may hold. */
  maxPushConfigs?: number;
  /** Sees every event this process makes (the node's metrics count state changes). */
  onEvent?: (event: TaskEvent) => void;
  /** Per-task caps (defaults from LIMITS). */
  limits?: Partial<TaskLimits>;
  /**
   * Whether a caller may change state or run work (cancel, push configs, messages the agent says
   * need a principal). Default: any authenticated principal.
   */
  mayAct?: (caller: Principal) => boolean;
}

/** What one task may hold. */
export interface TaskLimits {
  /** Messages kept in a task's history; the oldest go first. */
  historyMessages: number;
  /** Bytes of JSON kept in a task's history; the oldest go first, the newest message always stays. */
  historyBytes: number;
  /** Artifacts one task may hold. */
  artifacts: number;
  /** Bytes of JSON a task's artifacts may hold. */
  artifactBytes: number;
}

export type SendResult = { task: Task } | { message: Message };

/** A live subscription: the queue of events, ending after a terminal or interrupted state. */
export type Subscription = EventQueue<TaskEvent>;

/** Receives a task's events in order; `close` ends a stream after its final event. */
interface Listener {
  push(event: TaskEvent): void;
  close(): void;
}

/** In-memory state of a task that has a running agent turn or a subscriber. */
interface Live {
  rec: TaskRecord;
  /** False until the first event of a brand-new task; until then nothing is stored or visible. */
  stored: boolean;
  subscribers: Set<Listener>;
  turns: Set<AbortController>;
  lastSave: Promise<void>;
  /** Set when the agent answered a brand-new task with a Message; no task is created then. */
  reply?: Message;
  /** Called when a brand-new task is first stored (a shared store's stream waits for it). */
  onStored?: () => void;
  /** An observation in progress (see `observe`), shared by concurrent reads. */
  observing?: Promise<void> | undefined;
  /** Stored size of the task's artifacts, measured on the first artifact update. */
  artifactBytes?: number;
}

const MEDIA_ANY = '*/*';
const CANCELED_NOTE = "Canceled at the client's request";
const ORPHANED_NOTE =
  'The node process running this task stopped; send the request again as a new task';

export class TaskEngine {
  private readonly live = new Map<string, Live>();
  private readonly now: () => number;
  private readonly limits: TaskLimits;
  /** Set when other processes share the store. */
  private readonly cluster: TaskCluster | undefined;

  constructor(private readonly opts: EngineOptions) {
    this.now = opts.now ?? Date.now;
    this.limits = {
      historyMessages: LIMITS.taskHistoryMessages,
      historyBytes: LIMITS.taskHistoryBytes,
      artifacts: LIMITS.taskArtifacts,
      artifactBytes: LIMITS.taskArtifactBytes,
      ...opts.limits,
    };
    this.cluster = opts.store.cluster;
    this.cluster?.onChange((id, change) => this.remoteChange(id, change));
    this.cluster?.onOrphans((ids) => void this.takeOrphans(ids));
  }

  /** The one check of push support, and of a webhook address when there is one. */
  private pushProblem(url?: string, field = 'url'): A2AError | undefined {
    if (!this.opts.push) return a2aError('PUSH_NOTIFICATION_NOT_SUPPORTED');
    const why = url === undefined ? undefined : this.opts.push.refuse(url);
    return why ? a2aError('INVALID_PARAMS', why, field) : undefined;
  }

  /**
   * Starts or continues a task. `blocking` answers at a terminal or interrupted state (or when
   * the agent's turn ends); `immediate` answers once the task exists; `stream` answers with a
   * subscription that starts with the Task (or a single Message).
   */
  async send(
    params: SendParams,
    mode: 'blocking' | 'immediate',
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<SendResult | A2AError>;
  async send(
    params: SendParams,
    mode: 'stream',
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<Subscription | A2AError>;
  async send(
    params: SendParams,
    mode: 'blocking' | 'immediate' | 'stream',
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<SendResult | Subscription | A2AError> {
    const { message, configuration } = params;
    const bad = this.checkMedia(message.parts, configuration.acceptedOutputModes);
    if (bad) return bad;
    if (configuration.pushConfig) {
      const problem = this.pushProblem(
        configuration.pushConfig.url,
        'configuration.pushNotificationConfig.url',
      );
      if (problem) return problem;
      if (!this.mayAct(caller)) return unauthenticated('A webhook registration');
    }
    const why = this.opts.agent.needsPrincipal?.(message);
    if (why !== undefined && !this.mayAct(caller)) return unauthenticated(why);

    let live: Live;
    if (message.taskId) {
      // Only the task's creator may continue it; for anyone else it does not exist.
      if (!(await this.owned(message.taskId, caller)))
        return a2aError('TASK_NOT_FOUND', `Task not found: ${message.taskId}`, 'message.taskId');
      const found = await this.continuation(message);
      if (isA2AError(found)) return found;
      live = found;
    } else {
      const id = newTaskId();
      message.taskId = id;
      message.contextId ??= crypto.randomUUID();
      const task: Task = {
        id,
        contextId: message.contextId,
        status: { state: 'submitted', timestamp: nowIso(this.now) },
        artifacts: [],
        history: [message],
      };
      if (params.metadata) task.metadata = params.metadata;
      live = {
        rec: { task, push: [], creator: ownerKey(caller) },
        stored: false,
        subscribers: new Set(),
        turns: new Set(),
        lastSave: Promise.resolve(),
      };
      this.live.set(id, live);
    }
    if (configuration.pushConfig) {
      const cfg = { ...configuration.pushConfig, taskId: live.rec.task.id };
      if (this.cluster && live.stored)
        await this.sharedPush(cfg.taskId, (push) => withPush(push, cfg, version).push);
      else this.addPush(live, cfg, version);
    }

    if (mode === 'stream') {
      const sub = this.subscribe(live);
      // A continued task's stream opens with the task as it now stands.
      if (live.stored) sub.push({ kind: 'task', task: snapshot(live.rec.task) });
      const stored =
        this.cluster && !live.stored
          ? new Promise<void>((resolve) => (live.onStored = resolve))
          : undefined;
      const turn = this.runTurn(live, message, live.stored, version, caller).catch((e) =>
        this.turnCrashed(live, e),
      );
      // On a shared store the stream answers once the task is stored, so that every process of
      // the node finds the task its first frame names.
      if (stored) await Promise.race([stored, turn]);
      if (this.cluster) await live.lastSave.catch(() => {});
      return sub;
    }

    const outcome = new Promise<SendResult>((resolve) => {
      let settled = false;
      // A plain listener rather than a queue: the answer is decided inside publish, in order.
      const watcher: Listener = {
        push: (ev) => {
          if (ev.kind === 'message') finish({ message: ev.message });
          else if (mode === 'immediate' || (ev.kind === 'status' && ev.final))
            finish({ task: live.rec.task });
        },
        close: () => {},
      };
      const finish = (r: SendResult) => {
        if (settled) return;
        settled = true;
        live.subscribers.delete(watcher);
        this.release(live);
        resolve(r);
      };
      live.subscribers.add(watcher);
      const turn = this.runTurn(live, message, live.stored, version, caller);
      if (mode === 'immediate' && live.stored) finish({ task: live.rec.task });
      if (mode === 'immediate' && !live.stored) {
        // Give an agent that answers with a Message one turn of the event loop, then create the task.
        setImmediate(() => {
          if (live.reply) return finish({ message: live.reply });
          if (!settled && !live.stored) this.materialize(live);
          if (!settled && live.stored) finish({ task: live.rec.task });
        });
      }
      const afterTurn = () => {
        if (settled) return;
        if (live.reply) return finish({ message: live.reply });
        if (!live.stored) this.materialize(live);
        finish({ task: live.rec.task });
      };
      turn
        .catch((e) => this.turnCrashed(live, e))
        .then(afterTurn)
        .catch((e) => {
          this.turnCrashed(live, e);
          finish({ task: live.rec.task });
        });
    });
    const result = await outcome;
    if ('message' in result) return result;
    try {
      await live.lastSave;
    } catch {
      return a2aError('INTERNAL_ERROR', 'The task could not be stored');
    }
    return { task: withHistoryLength(snapshot(result.task), configuration.historyLength) };
  }

  async getTask(
    id: string,
    historyLength: number | undefined,
    caller: Principal,
  ): Promise<Task | A2AError> {
    if (!(await this.owned(id, caller)))
      return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    await this.observe(id);
    const rec = await this.record(id);
    if (!rec) return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    return withHistoryLength(snapshot(rec.task), historyLength);
  }

  /** The caller's own tasks only. */
  async listTasks(q: ListTasksQuery, caller: Principal): Promise<ListTasksPage | A2AError> {
    const creator = ownerKey(caller);
    const page = await this.opts.store.list(q, creator);
    if (!this.opts.agent.observe || 'error' in page) return page;
    const active = page.tasks.filter((t) => !isFinalState(t.status.state)).map((t) => t.id);
    if (!active.length) return page;
    await Promise.all(active.map((id) => this.observe(id)));
    return this.opts.store.list(q, creator); // the same page, with what the reads advanced
  }

  /** Lets the agent advance an active task on read; concurrent reads share one observation. */
  private async observe(id: string): Promise<void> {
    const observeHook = this.opts.agent.observe;
    if (!observeHook) return;
    const live = await this.liveFor(id);
    if (!live) return;
    if (isFinalState(live.rec.task.status.state)) {
      this.release(live);
      return;
    }
    if (live.observing) return live.observing;
    const updater = this.updater(live, () => true);
    live.observing = (async () => {
      try {
        await observeHook(updater);
      } catch (e) {
        this.opts.log('warn', 'task observation failed', {
          task: id,
          error: (e as Error)?.message ?? String(e),
        });
      }
      await live.lastSave.catch(() => {});
    })().finally(() => {
      live.observing = undefined;
      this.release(live);
    });
    return live.observing;
  }

  /** Cancels a task that is not yet terminal; a repeat cancel returns the canceled task. */
  async cancel(id: string, caller: Principal): Promise<Task | A2AError> {
    if (!this.mayAct(caller)) return unauthenticated('Canceling a task');
    if (!(await this.owned(id, caller)))
      return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    if (this.cluster && !this.runsHere(id)) return this.cancelShared(this.cluster, id);
    const live = await this.liveFor(id);
    if (!live) return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    try {
      const state = live.rec.task.status.state;
      if (state === 'canceled') return snapshot(live.rec.task);
      if (TERMINAL_STATES.has(state))
        return a2aError('TASK_NOT_CANCELABLE', `Task ${id} is ${state} and cannot be canceled`);
      for (const turn of live.turns) turn.abort();
      try {
        await this.opts.agent.cancel?.(snapshot(live.rec.task));
      } catch (e) {
        this.opts.log('warn', 'agent cancel hook failed', {
          task: id,
          error: (e as Error)?.message ?? String(e),
        });
      }
      if (TERMINAL_STATES.has(live.rec.task.status.state)) return snapshot(live.rec.task);
      this.apply(live, { kind: 'status', state: 'canceled', note: CANCELED_NOTE });
      await live.lastSave;
      return snapshot(live.rec.task);
    } catch {
      return a2aError('INTERNAL_ERROR', 'The task could not be stored');
    } finally {
      this.release(live);
    }
  }

  /**
   * Cancel on a shared store, for a task whose turn (if any) runs on another process: the
   * canceled state is written under the row lock; the process running the turn reads it and
   * stops. Webhooks get the event from here, where it was made.
   */
  private async cancelShared(cluster: TaskCluster, id: string): Promise<Task | A2AError> {
    const current = await this.opts.store.get(id);
    if (!current) return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    const before = current.task.status.state;
    if (before === 'canceled') return snapshot(current.task);
    if (TERMINAL_STATES.has(before))
      return a2aError('TASK_NOT_CANCELABLE', `Task ${id} is ${before} and cannot be canceled`);
    try {
      await this.opts.agent.cancel?.(snapshot(current.task));
    } catch (e) {
      this.opts.log('warn', 'agent cancel hook failed', {
        task: id,
        error: (e as Error)?.message ?? String(e),
      });
    }
    let out: Awaited<ReturnType<TaskCluster['update']>>;
    try {
      out = await cluster.update(id, (rec) => {
        const state = rec.task.status.state;
        if (state === 'canceled') return [];
        if (TERMINAL_STATES.has(state))
          return a2aError('TASK_NOT_CANCELABLE', `Task ${id} is ${state} and cannot be canceled`);
        return [this.setStatus(rec.task, 'canceled', CANCELED_NOTE)];
      });
    } catch {
      return a2aError('INTERNAL_ERROR', 'The task could not be stored');
    }
    if (!out) return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    if (isA2AError(out)) return out;
    this.madeHere(out.rec, out.events);
    return snapshot(out.rec.task);
  }

  /** A stream of a task's events that starts with the task itself. */
  async resubscribe(id: string, caller: Principal): Promise<Subscription | A2AError> {
    if (!(await this.owned(id, caller)))
      return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    let live: Live | undefined;
    let watching = false;
    if (this.cluster && !this.runsHere(id)) {
      // Register for other processes' events and read the task in one step, so nothing falls between.
      const rec = await this.cluster.watch(id);
      if (rec) {
        live = this.adopt(rec);
        watching = true;
      }
    } else live = await this.liveFor(id);
    if (!live) return a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'id');
    const state = live.rec.task.status.state;
    if (TERMINAL_STATES.has(state)) {
      if (watching) this.cluster!.unwatch(id);
      this.release(live);
      // A client whose stream a crash cut reconnects here: it gets the final state, then the end.
      if (failedByRestart(live.rec.task)) return finalOnly(live.rec.task);
      return a2aError(
        'UNSUPPORTED_OPERATION',
        `Task ${id} is ${state}; there is nothing left to subscribe to`,
      );
    }
    const sub = this.subscribe(live, watching ? () => this.cluster!.unwatch(id) : undefined);
    this.release(live);
    sub.push({ kind: 'task', task: snapshot(live.rec.task) });
    return sub;
  }

  // ---- push configs ----

  async setPush(
    cfg: Omit<PushConfig, 'id' | 'version'> & { id?: string },
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    const problem = this.pushProblem(cfg.url);
    if (problem) return problem;
    if (!this.mayAct(caller)) return unauthenticated('A webhook registration');
    if (!(await this.owned(cfg.taskId, caller)))
      return a2aError('TASK_NOT_FOUND', `Task not found: ${cfg.taskId}`, 'taskId');
    const max = this.opts.maxPushConfigs ?? 10;
    if (this.cluster) {
      let stored: PushConfig | undefined;
      const out = await this.sharedPush(cfg.taskId, (push) => {
        if (!push.some((p) => p.id === cfg.id) && push.length >= max)
          return a2aError('INVALID_PARAMS', `A task holds at most ${max} push configs`, 'id');
        const next = withPush(push, cfg, version);
        stored = next.stored;
        return next.push;
      });
      return isA2AError(out) ? out : stored!;
    }
    const live = await this.liveFor(cfg.taskId);
    if (!live) return a2aError('TASK_NOT_FOUND', `Task not found: ${cfg.taskId}`, 'taskId');
    try {
      if (!live.rec.push.some((p) => p.id === cfg.id) && live.rec.push.length >= max)
        return a2aError('INVALID_PARAMS', `A task holds at most ${max} push configs`, 'id');
      const stored = this.addPush(live, cfg, version);
      this.store(live);
      await live.lastSave;
      return stored;
    } finally {
      this.release(live);
    }
  }

  /** One webhook registration, token included: only the task's creator gets here. */
  async getPush(
    taskId: string,
    id: string | undefined,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    const off = this.pushProblem();
    if (off) return off;
    const rec = await this.owned(taskId, caller);
    if (!rec) return a2aError('TASK_NOT_FOUND', `Task not found: ${taskId}`, 'taskId');
    const cfg = id === undefined ? rec.push[0] : rec.push.find((p) => p.id === id);
    return cfg ?? a2aError('TASK_NOT_FOUND', `Push config not found: ${id ?? '(none)'}`, 'id');
  }

  /** The task's webhook registrations without their tokens (a list never shows a secret). */
  async listPush(taskId: string, caller: Principal): Promise<PushConfig[] | A2AError> {
    const off = this.pushProblem();
    if (off) return off;
    const rec = await this.owned(taskId, caller);
    if (!rec) return a2aError('TASK_NOT_FOUND', `Task not found: ${taskId}`, 'taskId');
    return rec.push.map(({ token: _token, ...rest }) => rest);
  }

  /** Idempotent: deleting a config that is already gone succeeds. */
  async deletePush(taskId: string, id: string, caller: Principal): Promise<null | A2AError> {
    const off = this.pushProblem();
    if (off) return off;
    if (!this.mayAct(caller)) return unauthenticated('Deleting a webhook registration');
    if (!(await this.owned(taskId, caller)))
      return a2aError('TASK_NOT_FOUND', `Task not found: ${taskId}`, 'taskId');
    if (this.cluster) {
      const out = await this.sharedPush(taskId, (push) => push.filter((p) => p.id !== id));
      return isA2AError(out) ? out : null;
    }
    const live = await this.liveFor(taskId);
    if (!live) return a2aError('TASK_NOT_FOUND', `Task not found: ${taskId}`, 'taskId');
    try {
      const before = live.rec.push.length;
      live.rec.push = live.rec.push.filter((p) => p.id !== id);
      if (live.rec.push.length !== before) {
        this.store(live);
        await live.lastSave;
      }
      return null;
    } finally {
      this.release(live);
    }
  }

  /** Aborts every running turn (used at shutdown) and waits for pending writes. */
  async close(): Promise<void> {
    for (const live of this.live.values()) {
      for (const t of live.turns) t.abort();
      for (const s of live.subscribers) s.close();
    }
    await this.opts.store.flush();
  }

  // ---- internals ----

  private addPush(
    live: Live,
    cfg: Omit<PushConfig, 'id' | 'version'> & { id?: string },
    version: ProtocolVersion,
  ): PushConfig {
    const next = withPush(live.rec.push, { ...cfg, taskId: live.rec.task.id }, version);
    live.rec.push = next.push;
    return next.stored;
  }

  /** A change of a task's push configs on a shared store, under the row lock; the live copy follows. */
  private async sharedPush(
    taskId: string,
    change: (push: PushConfig[]) => PushConfig[] | A2AError,
  ): Promise<PushConfig[] | A2AError> {
    let out: PushConfig[] | A2AError | undefined;
    try {
      out = await this.cluster!.updatePush(taskId, change);
    } catch {
      return a2aError('INTERNAL_ERROR', 'The task could not be stored');
    }
    if (!out) return a2aError('TASK_NOT_FOUND', `Task not found: ${taskId}`, 'taskId');
    const live = this.live.get(taskId);
    if (live && !isA2AError(out)) live.rec.push = out;
    return out;
  }

  /** Whether a turn of this process runs the task (on a shared store, then this process writes it). */
  private runsHere(id: string): boolean {
    const live = this.live.get(id);
    return !!live && live.stored && live.turns.size > 0;
  }

  /**
   * The task a message continues, with the message added to its history. On a shared store a
   * task whose turn runs elsewhere is claimed under the row lock; one still working on another
   * live process is refused (UNSUPPORTED_OPERATION) rather than run twice.
   */
  private async continuation(message: Message): Promise<Live | A2AError> {
    const id = message.taskId!;
    const notFound = () => a2aError('TASK_NOT_FOUND', `Task not found: ${id}`, 'message.taskId');
    if (this.cluster && !this.runsHere(id)) {
      let out: Awaited<ReturnType<TaskCluster['update']>>;
      try {
        out = await this.cluster.update(
          id,
          (rec, turn) => {
            const refused = continuationProblem(rec.task, message);
            if (refused) return refused;
            if (turn.busyElsewhere)
              return a2aError(
                'UNSUPPORTED_OPERATION',
                `Task ${id} is ${rec.task.status.state} on another process of this node; send the next message when it asks for input or has ended`,
              );
            message.contextId = rec.task.contextId;
            rec.task.history.push(message);
            trimHistory(rec.task.history, this.limits);
            return [];
          },
          { claim: true },
        );
      } catch {
        return a2aError('INTERNAL_ERROR', 'The task could not be stored');
      }
      if (!out) return notFound();
      return isA2AError(out) ? out : this.adopt(out.rec);
    }
    const live = await this.liveFor(id);
    if (!live) return notFound();
    const refused = continuationProblem(live.rec.task, message);
    if (refused) {
      this.release(live);
      return refused;
    }
    message.contextId = live.rec.task.contextId;
    live.rec.task.history.push(message);
    trimHistory(live.rec.task.history, this.limits);
    this.store(live);
    return live;
  }

  private mayAct(caller: Principal): boolean {
    return (this.opts.mayAct ?? isAuthenticated)(caller);
  }

  /**
   * The stored record of a task the caller created, or undefined: another principal's task is
   * answered exactly like a missing one, so its existence does not leak.
   */
  private async owned(id: string, caller: Principal): Promise<TaskRecord | undefined> {
    const rec = await this.record(id);
    return rec && creatorOf(rec) === ownerKey(caller) ? rec : undefined;
  }

  private async record(id: string): Promise<TaskRecord | undefined> {
    const live = this.live.get(id);
    if (live && !live.stored) return undefined;
    // On a shared store only a turn of this process makes the live copy the newest.
    if (live && (!this.cluster || live.turns.size)) return live.rec;
    return this.opts.store.get(id);
  }

  /** The live state of a stored task, created on demand. Callers pair it with `release`. */
  private async liveFor(id: string): Promise<Live | undefined> {
    let live = this.live.get(id);
    if (live) return live.stored ? live : undefined;
    const rec = await this.opts.store.get(id);
    if (!rec) return undefined;
    live = this.live.get(id); // another call may have made it meanwhile
    if (live) return live.stored ? live : undefined;
    live = {
      rec,
      stored: true,
      subscribers: new Set(),
      turns: new Set(),
      lastSave: Promise.resolve(),
    };
    this.live.set(id, live);
    return live;
  }

  /** The live state for a record just read from a shared store; a live copy present takes it. */
  private adopt(rec: TaskRecord): Live {
    let live = this.live.get(rec.task.id);
    if (live) {
      live.rec = rec;
      live.stored = true;
      return live;
    }
    live = {
      rec,
      stored: true,
      subscribers: new Set(),
      turns: new Set(),
      lastSave: Promise.resolve(),
    };
    this.live.set(rec.task.id, live);
    return live;
  }

  /**
   * Another process changed a task live here: the live copy takes the stored one, a turn of this
   * process on it stops (the task was canceled, or another process took it over), and this
   * process's streams get the events. Webhooks were sent by the process that made them.
   */
  private remoteChange(id: string, change: RemoteChange): void {
    const live = this.live.get(id);
    if (!live?.stored) return;
    live.rec.push = change.push;
    if (!change.task) return;
    live.rec = { task: change.task, push: change.push, version: change.version };
    for (const turn of live.turns) turn.abort();
    for (const event of change.events ?? rebuiltEvents(change.task)) this.publishLocal(live, event);
  }

  /**
   * Tasks a gone process of the node left running: no turn runs them any more, so this process
   * fails each (its webhooks and the streams watching it get the final state).
   */
  private async takeOrphans(ids: string[]): Promise<void> {
    for (const id of ids) {
      try {
        const out = await this.cluster!.update(
          id,
          (rec, turn) => {
            // An agent that can resume the task (the hub's delegations) keeps it, as at a restart.
            if (!turn.orphaned || this.opts.agent.resumes?.(rec.task)) return null;
            return [this.setStatus(rec.task, 'failed', ORPHANED_NOTE)];
          },
          { claim: true },
        );
        if (out && !isA2AError(out) && out.events.length) {
          this.opts.log('warn', 'task left running by a stopped process failed', { task: id });
          this.madeHere(out.rec, out.events);
        }
      } catch (e) {
        this.opts.log('warn', 'taking over a task failed', {
          task: id,
          error: (e as Error)?.message ?? String(e),
        });
      }
    }
  }

  /** Events this process made on a shared store outside a turn: to its streams and to the webhooks. */
  private madeHere(rec: TaskRecord, events: TaskEvent[]): void {
    const live = this.live.get(rec.task.id);
    if (live?.stored) live.rec = rec;
    for (const event of events) {
      if (live?.stored) this.publishLocal(live, event);
      if (rec.push.length && event.kind !== 'message') this.opts.push?.notify(rec.push, event);
    }
  }

  /** Forgets live state nobody uses any more, so memory does not grow with the task count. */
  private release(live: Live): void {
    if (
      live.turns.size === 0 &&
      live.subscribers.size === 0 &&
      this.live.get(live.rec.task.id) === live
    ) {
      const forget = () => {
        if (
          live.turns.size === 0 &&
          live.subscribers.size === 0 &&
          this.live.get(live.rec.task.id) === live
        )
          this.live.delete(live.rec.task.id);
      };
      // Forget after the last write whether it worked or not; a failed write is the store's to log
      // and its callers' to answer, never an unhandled rejection here.
      live.lastSave.then(forget, forget);
    }
  }

  private subscribe(live: Live, onClose?: () => void): Subscription {
    const sub: Subscription = new EventQueue<TaskEvent>(() => {
      live.subscribers.delete(sub);
      onClose?.();
      this.release(live);
    });
    live.subscribers.add(sub);
    return sub;
  }

  private store(live: Live, event?: TaskEvent): void {
    const save = this.opts.store.save(live.rec, event);
    save.catch(() => {}); // reported by the store's log; callers awaiting lastSave see the failure
    live.lastSave = save;
  }

  private publish(live: Live, event: TaskEvent): void {
    this.opts.onEvent?.(event);
    this.publishLocal(live, event);
    if (live.rec.push.length && event.kind !== 'message')
      this.opts.push?.notify(live.rec.push, event);
  }

  /** To this process's streams only. */
  private publishLocal(live: Live, event: TaskEvent): void {
    for (const sub of live.subscribers) {
      sub.push(event);
      if (event.kind === 'message' || (event.kind === 'status' && event.final)) sub.close();
    }
  }

  /** Stores a brand-new task and announces it; from here on it is visible to every reader. */
  private materialize(live: Live): void {
    if (live.stored) return;
    live.stored = true;
    this.store(live);
    live.onStored?.();
    this.publish(live, { kind: 'task', task: snapshot(live.rec.task) });
  }

  private apply(
    live: Live,
    update:
      | { kind: 'status'; state: TaskState; note?: string | Part[] }
      | { kind: 'artifact'; artifact: Artifact; append: boolean; lastChunk: boolean },
  ): void {
    const task = live.rec.task;
    if (TERMINAL_STATES.has(task.status.state)) return; // a terminal task is immutable
    this.materialize(live);
    if (update.kind === 'status') {
      const event = this.setStatus(task, update.state, update.note);
      this.store(live, event);
      this.publish(live, event);
    } else {
      const existing = task.artifacts.findIndex((a) => a.artifactId === update.artifact.artifactId);
      const tooLarge = this.artifactRefusal(live, existing, update.artifact, update.append);
      if (tooLarge) {
        this.opts.log('warn', 'task artifacts past their cap', { task: task.id, limit: tooLarge });
        this.apply(live, {
          kind: 'status',
          state: 'failed',
          note: failureParts({ code: 'TASK_TOO_LARGE', message: tooLarge }),
        });
        return;
      }
      if (existing >= 0 && update.append) {
        const prev = task.artifacts[existing]!;
        task.artifacts[existing] = { ...prev, parts: [...prev.parts, ...update.artifact.parts] };
      } else if (existing >= 0) task.artifacts[existing] = update.artifact;
      else task.artifacts.push(update.artifact);
      const event: TaskEvent = {
        kind: 'artifact',
        taskId: task.id,
        contextId: task.contextId,
        artifact: update.artifact,
        append: update.append,
        lastChunk: update.lastChunk,
      };
      this.store(live, event);
      this.publish(live, event);
    }
  }

  /** Moves a task to a state (the note, if any, joins its history) and returns the status event. */
  private setStatus(task: Task, state: TaskState, note?: string | Part[]): TaskEvent {
    const status: Task['status'] = { state, timestamp: nowIso(this.now) };
    if (note !== undefined) {
      const message: Message = {
        messageId: crypto.randomUUID(),
        role: 'agent',
        parts: typeof note === 'string' ? [{ text: note }] : note,
        contextId: task.contextId,
        taskId: task.id,
      };
      status.message = message;
      task.history.push(message);
      trimHistory(task.history, this.limits);
    }
    task.status = status;
    return {
      kind: 'status',
      taskId: task.id,
      contextId: task.contextId,
      status,
      final: isFinalState(state),
    };
  }

  /**
   * Why adding `artifact` would take the task past its artifact caps, or null when it fits; on
   * null the running byte count already includes it.
   */
  private artifactRefusal(
    live: Live,
    existing: number,
    artifact: Artifact,
    append: boolean,
  ): string | null {
    const task = live.rec.task;
    const { artifacts: maxCount, artifactBytes: maxBytes } = this.limits;
    if (existing < 0 && task.artifacts.length + 1 > maxCount)
      return `A task holds at most ${maxCount} artifacts`;
    const before = (live.artifactBytes ??= jsonBytes(task.artifacts));
    const added = append ? jsonBytes(artifact.parts) : jsonBytes(artifact);
    const removed = existing >= 0 && !append ? jsonBytes(task.artifacts[existing]) : 0;
    const after = before + added - removed;
    if (after > maxBytes) return `A task's artifacts hold at most ${maxBytes} bytes`;
    live.artifactBytes = after;
    return null;
  }

  /** The status, artifact and metadata reporters of a task, active while `active()` says so. */
  private updater(live: Live, active: () => boolean): TaskUpdater {
    const engine = this;
    const status = (state: TaskState, note?: string | Part[]) => {
      if (active())
        engine.apply(live, { kind: 'status', state, ...(note !== undefined ? { note } : {}) });
    };
    return {
      get task() {
        return live.rec.task;
      },
      working: (note) => status('working', note),
      complete: (note) => status('completed', note),
      fail: (reason) => status('failed', reason),
      status,
      artifact(input: ArtifactInput, opts) {
        const artifact = toArtifact(input);
        if (active())
          engine.apply(live, {
            kind: 'artifact',
            artifact,
            append: !!opts?.append,
            lastChunk: !!opts?.lastChunk,
          });
        return artifact;
      },
      setMetadata(values) {
        if (!active() || TERMINAL_STATES.has(live.rec.task.status.state)) return;
        live.rec.task.metadata = { ...live.rec.task.metadata, ...values };
        if (live.stored) engine.store(live);
      },
    };
  }

  /** Runs one agent turn; resolves when the agent's handler returns (after failing the task if it threw). */
  private async runTurn(
    live: Live,
    message: Message,
    continued: boolean,
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<void> {
    const controller = new AbortController();
    live.turns.add(controller);
    const id = live.rec.task.id;
    this.cluster?.hold(id); // on a shared store, this process now runs the task
    let answered = false;
    const engine = this;
    const active = () => !controller.signal.aborted && !answered;
    const up = this.updater(live, active);
    const textParts = message.parts.filter((p) => typeof p.text === 'string').map((p) => p.text);
    const ctx: AgentContext = {
      get task() {
        return live.rec.task;
      },
      message,
      text: textParts.join('\n'),
      data: message.parts.find((p) => p.data !== undefined)?.data,
      signal: controller.signal,
      continued,
      version,
      caller,
      working: up.working,
      complete: up.complete,
      fail: up.fail,
      status: up.status,
      artifact: up.artifact,
      setMetadata: up.setMetadata,
      reject: (reason) => up.status('rejected', reason),
      requireInput: (question) => up.status('input-required', question),
      requireAuth: (reason) => up.status('auth-required', reason),
      reply(content) {
        if (!active()) return;
        const parts = typeof content === 'string' ? [{ text: content }] : content;
        if (live.stored) return up.status('completed', parts);
        answered = true;
        const reply: Message = {
          messageId: crypto.randomUUID(),
          role: 'agent',
          parts,
          contextId: live.rec.task.contextId,
        };
        live.reply = reply;
        engine.live.delete(live.rec.task.id);
        engine.publish(live, { kind: 'message', message: reply });
      },
    };
    try {
      await this.opts.agent.handle(ctx);
    } catch (e) {
      this.opts.log('error', 'agent turn failed', {
        task: live.rec.task.id,
        error: (e as Error)?.message ?? String(e),
      });
      if (active() && !TERMINAL_STATES.has(live.rec.task.status.state))
        this.apply(live, {
          kind: 'status',
          state: 'failed',
          note: 'The agent failed while handling the message',
        });
    } finally {
      live.turns.delete(controller);
      this.cluster?.release(id);
      if (!answered) this.release(live);
    }
  }

  /**
   * A turn whose own failure handling threw (a bug, or a task the store cannot hold): logged with
   * its kind only, never left as an unhandled rejection that would stop the process.
   */
  private turnCrashed(live: Live, e: unknown): void {
    this.opts.log('error', 'task turn crashed', {
      task: live.rec.task.id,
      error: (e as Error)?.name ?? 'unknown',
    });
  }

  private checkMedia(parts: Part[], accepted: string[] | undefined): A2AError | null {
    for (const [i, p] of parts.entries()) {
      if (p.mediaType && !mediaMatches(p.mediaType, this.opts.inputModes))
        return a2aError(
          'CONTENT_TYPE_NOT_SUPPORTED',
          `Part ${i} has media type ${p.mediaType}; this agent accepts ${this.opts.inputModes.join(', ')}`,
          `message.parts[${i}].mediaType`,
        );
    }
    if (
      accepted &&
      !accepted.some(
        (m) =>
          mediaMatches(m, this.opts.outputModes) ||
          this.opts.outputModes.some((o) => mediaMatches(o, [m])),
      )
    )
      return a2aError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `None of the accepted output modes is produced; this agent produces ${this.opts.outputModes.join(', ')}`,
        'configuration.acceptedOutputModes',
      );
    return null;
  }
}

/** Why a message cannot continue a task, or undefined when it can. */
/** The refusal of an action that needs an authenticated caller. */
function unauthenticated(what: string): A2AError {
  return a2aError(
    'UNAUTHENTICATED',
    `${what} needs an authenticated caller: send a bearer token (Authorization: Bearer …) or sign as a fleet node`,
  );
}

function continuationProblem(task: Task, message: Message): A2AError | undefined {
  if (TERMINAL_STATES.has(task.status.state))
    return a2aError(
      'UNSUPPORTED_OPERATION',
      `Task ${task.id} is ${task.status.state}; a terminal task takes no more messages, start a new task`,
    );
  if (message.contextId && message.contextId !== task.contextId)
    return a2aError(
      'INVALID_PARAMS',
      `message.contextId ${message.contextId} does not match the task's contextId ${task.contextId}`,
      'message.contextId',
    );
  return undefined;
}

/** A task's configs with one added (or replaced by id). */
function withPush(
  push: readonly PushConfig[],
  cfg: Omit<PushConfig, 'id' | 'version'> & { id?: string },
  version: ProtocolVersion,
): { push: PushConfig[]; stored: PushConfig } {
  const stored: PushConfig = { ...cfg, id: cfg.id ?? crypto.randomUUID(), version };
  return { push: [...push.filter((p) => p.id !== stored.id), stored], stored };
}

/**
 * The events a stream that missed some steps gets instead: every artifact as it now stands, then
 * the current status.
 */
function rebuiltEvents(task: Task): TaskEvent[] {
  const base = { taskId: task.id, contextId: task.contextId };
  return [
    ...task.artifacts.map(
      (artifact): TaskEvent => ({
        kind: 'artifact',
        ...base,
        artifact,
        append: false,
        lastChunk: true,
      }),
    ),
    { kind: 'status', ...base, status: task.status, final: isFinalState(task.status.state) },
  ];
}

/** Whether a media type is in a list that may hold `type/*` or `*\/*` wildcards (parameters ignored). */
function mediaMatches(mediaType: string, allowed: readonly string[]): boolean {
  const bare = mediaType.split(';')[0]!.trim().toLowerCase();
  const [type] = bare.split('/');
  return allowed.some((a) => {
    const m = a.toLowerCase();
    return m === MEDIA_ANY || m === bare || (m.endsWith('/*') && m.slice(0, -2) === type);
  });
}

function toArtifact(input: ArtifactInput): Artifact {
  const a: Artifact = { artifactId: input.artifactId ?? crypto.randomUUID(), parts: input.parts };
  if (input.name) a.name = input.name;
  if (input.description) a.description = input.description;
  if (input.metadata) a.metadata = input.metadata;
  return a;
}

/** A subscription that holds a terminal task's snapshot and is already closed. */
function finalOnly(task: Task): Subscription {
  const sub: Subscription = new EventQueue<TaskEvent>();
  sub.push({ kind: 'task', task: snapshot(task) });
  sub.close();
  return sub;
}

const messageBytes = new WeakMap<Message, number>();

/** Drops the oldest messages past either history cap; the newest message always stays. */
function trimHistory(history: Message[], limits: TaskLimits): void {
  let bytes = 0;
  let keep = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    let size = messageBytes.get(m);
    if (size === undefined) messageBytes.set(m, (size = jsonBytes(m)));
    if (keep > 0 && (keep >= limits.historyMessages || bytes + size > limits.historyBytes)) break;
    bytes += size;
    keep++;
  }
  if (keep < history.length) history.splice(0, history.length - keep);
}

/** A copy that later changes to the live task cannot alter (events are read after they are sent). */
function snapshot(task: Task): Task {
  return {
    ...task,
    status: { ...task.status },
    artifacts: [...task.artifacts],
    history: [...task.history],
  };
}
