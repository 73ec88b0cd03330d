/**
 * @module lib/a2a/engine/engine — the task engine's public operations (A2A task lifecycle): send and
 * stream a message, read, list, cancel and resubscribe to tasks, and manage their push configs.
 * Protocol-version neutral: the operations (lib/a2a/operations.ts) and bindings translate.
 *
 * The work is split by responsibility under lib/a2a/engine/: one agent turn (agent-turn.ts), the
 * live tasks and their events (live-tasks.ts), push configs (push-configs.ts), the pure task rules
 * (task-rules.ts), and the coordination that differs between a store this process alone writes
 * (local-tasks.ts) and one several processes of the node share (shared-tasks.ts).
 *
 * Each task is bounded: its history keeps the newest messages within a count and a byte cap, and
 * artifacts past their caps fail the task with `TASK_TOO_LARGE`.
 */

import type { Agent } from '../agent.ts';
import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import {
  TERMINAL_STATES,
  isFinalState,
  withHistoryLength,
  type ListTasksPage,
  type ListTasksQuery,
  type ProtocolVersion,
  type PushConfig,
  type Task,
  type TaskEvent,
} from '../types.ts';
import { LIMITS } from '../../limits.ts';
import type { Log } from '../../log.ts';
import { creatorOf, type TaskRecord, type TaskStore } from '../store/task-store.ts';
import { isAuthenticated, ownerKey, type Principal } from '../../auth/principal.ts';
import { failedByRestart } from './recovery.ts';
import { taskUpdater, turnCrashed } from './agent-turn.ts';
import type { EngineCore, PushSender, TaskCoordination } from './core.ts';
import { LiveTasks, finalOnly, type Subscription } from './live-tasks.ts';
import { LongPolls, passed, type LongPollBounds } from './long-polls.ts';
import { Retries, type Earlier } from './retries.ts';
import type { RetryBook } from '../store/retry-book.ts';
import { LocalTasks } from './local-tasks.ts';
import { PushConfigs } from './push-configs.ts';
import { resumeAfter } from './resume.ts';
import { WatchedTasks } from './watched-tasks.ts';
import {
  answerSend,
  beginSend,
  sendTurn,
  type SendContext,
  type SendDeps,
  type SendResult,
} from './send-message.ts';
import { SharedTasks } from './shared-tasks.ts';
import { TurnGate } from './turn-gate.ts';
import {
  eventLogBound,
  notStored,
  snapshot,
  taskNotFound,
  unauthenticated,
  type PushConfigInput,
  type TaskLimits,
} from './task-rules.ts';

export type { PushSender, WebhookUrlFailure } from './core.ts';
export type { Subscription } from './live-tasks.ts';
export type { TaskLimits } from './task-rules.ts';
export type { SendContext, SendResult } from './send-message.ts';

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
  /** Turns one principal may have running at once (all anonymous callers are one); default LIMITS. */
  turnsPerPrincipal?: number;
  /** While a task with an `observe`-able agent has subscribers, it is observed this often at most (default 1 000 ms). */
  observeWatchedEveryMs?: number;
  /** GetTask long-polls (`currentGeneration`): the wait and the bounds (defaults from LIMITS). */
  longPolls?: Partial<LongPollBounds>;
  /** Where new tasks' messageIds are kept so a retried send answers its task (none: every send runs). */
  retries?: RetryBook;
}

export class TaskEngine {
  private readonly core: EngineCore;
  private readonly coordination: TaskCoordination;
  private readonly pushConfigs: PushConfigs;
  private readonly sending: SendDeps;
  private readonly watched: WatchedTasks;
  private readonly polls: LongPolls;
  private readonly retries: Retries;

  constructor(private readonly opts: EngineOptions) {
    const limits: TaskLimits = {
      historyMessages: LIMITS.taskHistoryMessages,
      historyBytes: LIMITS.taskHistoryBytes,
      artifacts: LIMITS.taskArtifacts,
      artifactBytes: LIMITS.taskArtifactBytes,
      eventLogEvents: LIMITS.taskEventLogEvents,
      eventLogBytes: LIMITS.taskEventLogBytes,
      ...opts.limits,
    };
    this.core = {
      store: opts.store,
      agent: opts.agent,
      log: opts.log,
      now: opts.now ?? Date.now,
      limits,
      live: new LiveTasks({
        eventLog: eventLogBound(limits),
        store: opts.store,
        onEvent: opts.onEvent,
        notify: opts.push && ((configs, event) => opts.push!.notify(configs, event)),
        changed: (task) => this.polls.changed(task),
      }),
      push: opts.push,
    };
    // The one place the kind of store matters: shared by several processes, or this one's alone.
    const cluster = opts.store.cluster;
    this.coordination = cluster ? new SharedTasks(this.core, cluster) : new LocalTasks(this.core);
    this.pushConfigs = new PushConfigs({
      push: opts.push,
      coordination: this.coordination,
      max: opts.maxPushConfigs ?? 10,
      mayAct: (caller) => this.mayAct(caller),
      owned: (id, caller) => this.owned(id, caller),
    });
    this.polls = new LongPolls(
      {
        waitMs: LIMITS.longPollMs,
        max: LIMITS.longPolls,
        perPrincipal: LIMITS.longPollsPerPrincipal,
        ...opts.longPolls,
      },
      {
        record: (id) => this.coordination.record(id),
        live: this.core.live,
        cluster,
        // A held read advances a task its agent advances on read, as a subscriber does.
        observe: opts.agent.observe && ((id) => this.observe(id)),
        observeEveryMs: opts.observeWatchedEveryMs ?? 1_000,
      },
    );
    this.retries = new Retries(opts.retries, this.core, this.coordination, (id, caller) =>
      this.owned(id, caller),
    );
    this.watched = new WatchedTasks((id) => this.observe(id), opts.observeWatchedEveryMs ?? 1_000);
    this.sending = {
      core: this.core,
      coordination: this.coordination,
      inputModes: opts.inputModes,
      outputModes: opts.outputModes,
      mayAct: (caller) => this.mayAct(caller),
      owned: (id, caller) => this.owned(id, caller),
      turns: new TurnGate(opts.turnsPerPrincipal ?? LIMITS.turnsPerPrincipal),
    };
  }

  /**
   * Starts or continues a task and answers at a terminal or interrupted state (or when the agent's
   * turn ends); with `returnImmediately` it answers once the task exists.
   */
  async send(ctx: SendContext): Promise<SendResult | A2AError> {
    const earlier = await this.retries.earlier(ctx);
    if (isA2AError(earlier)) return earlier;
    if (earlier && 'repeat' in earlier) return this.retries.answer(earlier.repeat, ctx);
    const began = await this.begin(ctx, earlier);
    if (isA2AError(began)) return began;
    const { live } = began;
    const immediate = !!ctx.params.configuration.returnImmediately;
    const result = await answerSend(this.sending, began, ctx, immediate);
    if ('message' in result) return result;
    let { task, stored } = result;
    try {
      // The turn may have moved on while that save ran (with `returnImmediately` it goes on). A
      // change made after a write started gets a save of its own, so while the last save is the
      // one just awaited, the task as it is now is stored; otherwise the newer state is answered
      // once its save is done, a few times at most so that a busy turn cannot hold the answer.
      // Never a state whose save has not finished.
      for (let i = 0; ; i++) {
        await stored;
        if (live.lastSave === stored) {
          task = snapshot(live.rec.task);
          break;
        }
        if (i === 3) break;
        stored = live.lastSave;
        task = snapshot(live.rec.task);
      }
    } catch {
      return notStored();
    }
    const { historyLength } = ctx.params.configuration;
    return { task: withHistoryLength(task, historyLength) };
  }

  /** Starts or continues a task and answers with its events, starting with the Task (or a single Message). */
  async stream(ctx: SendContext): Promise<Subscription | A2AError> {
    const earlier = await this.retries.earlier(ctx);
    if (isA2AError(earlier)) return earlier;
    // A retried stream follows the task the first one made (docs/decisions.md, "Tasks and stores").
    if (earlier && 'repeat' in earlier) return this.retries.follow(earlier.repeat, ctx);
    const began = await this.begin(ctx, earlier);
    if (isA2AError(began)) return began;
    const { live } = began;
    const sub = this.core.live.subscribe(live);
    // A continued task's stream opens with the task as it now stands.
    if (live.stored) sub.push({ kind: 'task', task: snapshot(live.rec.task) });
    await this.coordination.openStream(live, () =>
      sendTurn(this.sending, began, ctx).catch((e) => turnCrashed(this.core, live, e)),
    );
    return sub;
  }

  /**
   * The task; with `currentGeneration` (A2A 1.1's long-poll) held until its generation passes that
   * one or the bounded wait ends (a terminal task answers at once: it cannot move), or `gone`
   * (the request's abort signal) says its client went away: its slot is freed then.
   */
  async getTask(
    id: string,
    historyLength: number | undefined,
    caller: Principal,
    currentGeneration?: number,
    gone?: AbortSignal,
  ): Promise<Task | A2AError> {
    if (!(await this.owned(id, caller))) return taskNotFound(id, 'id');
    await this.observe(id);
    let rec = await this.coordination.record(id);
    if (rec && currentGeneration !== undefined && !passed(rec.task, currentGeneration)) {
      const held = await this.polls.hold(id, currentGeneration, caller, rec, gone);
      if (isA2AError(held)) return held;
      rec = held;
    }
    if (!rec) return taskNotFound(id, 'id');
    return withHistoryLength(snapshot(rec.task), historyLength);
  }

  /** GetTask long-polls held right now in this process. */
  get longPollsHeld(): number {
    return this.polls.held;
  }

  /** The caller's own tasks only. */
  async listTasks(q: ListTasksQuery, caller: Principal): Promise<ListTasksPage | A2AError> {
    const creator = ownerKey(caller);
    const page = await this.opts.store.list(q, creator);
    if (!this.opts.agent.observe || isA2AError(page)) return page;
    const active = page.tasks.filter((t) => !isFinalState(t.status.state)).map((t) => t.id);
    if (!active.length) return page;
    await Promise.all(active.map((id) => this.observe(id)));
    return this.opts.store.list(q, creator); // the same page, with what the reads advanced
  }

  /** Cancels a task that is not yet terminal; a repeat cancel returns the canceled task. */
  async cancel(id: string, caller: Principal): Promise<Task | A2AError> {
    if (!this.mayAct(caller)) return unauthenticated('Canceling a task', caller);
    if (!(await this.owned(id, caller))) return taskNotFound(id, 'id');
    return this.coordination.cancel(id);
  }

  /**
   * A stream of a task's events that starts with the task itself; with `after` (a resume cursor)
   * it starts with the events after that generation instead (lib/a2a/engine/resume.ts).
   */
  async resubscribe(
    id: string,
    caller: Principal,
    after?: number,
  ): Promise<Subscription | A2AError> {
    if (!(await this.owned(id, caller))) return taskNotFound(id, 'id');
    return this.coordination.watch(
      id,
      (): Subscription | A2AError => taskNotFound(id, 'id'),
      (live, stop) => {
        if (after !== undefined) {
          const sub = resumeAfter(this.core.live, live, after, stop);
          if (!isA2AError(sub) && !sub.isClosed && this.opts.agent.observe)
            this.watched.watch(live);
          return sub;
        }
        const state = live.rec.task.status.state;
        if (TERMINAL_STATES.has(state)) {
          stop?.();
          // A client whose stream a crash cut reconnects here: it gets the final state, then the end.
          if (failedByRestart(live.rec.task)) return finalOnly(live.rec.task);
          return a2aError(
            'UNSUPPORTED_OPERATION',
            `Task ${id} is ${state}; there is nothing left to subscribe to`,
          );
        }
        const sub = this.core.live.subscribe(live, stop);
        sub.push({ kind: 'task', task: snapshot(live.rec.task) });
        // A watched task advances as if read: its subscriber sees it settle without a GetTask.
        if (this.opts.agent.observe) this.watched.watch(live);
        return sub;
      },
    );
  }

  setPush(
    cfg: PushConfigInput,
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    return this.pushConfigs.set(cfg, version, caller);
  }

  /** One webhook registration, token included: only the task's creator gets here. */
  getPush(
    taskId: string,
    id: string | undefined,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    return this.pushConfigs.get(taskId, id, caller);
  }

  /** The task's webhook registrations without their tokens (a list never shows a secret). */
  listPush(taskId: string, caller: Principal): Promise<PushConfig[] | A2AError> {
    return this.pushConfigs.list(taskId, caller);
  }

  /** Idempotent: deleting a config that is already gone succeeds. */
  deletePush(taskId: string, id: string, caller: Principal): Promise<null | A2AError> {
    return this.pushConfigs.delete(taskId, id, caller);
  }

  /** Aborts every running turn (used at shutdown) and waits for pending writes. */
  async close(): Promise<void> {
    this.polls.close();
    for (const live of this.core.live.all()) {
      for (const t of live.turns) t.abort();
      for (const s of live.subscribers) s.close();
    }
    await this.opts.store.flush();
    await this.opts.retries?.close();
  }

  // ---- internals ----

  /** `beginSend`, and for a new task the claim of its messageId before its turn runs. */
  private async begin(ctx: SendContext, earlier: Earlier) {
    const began = await beginSend(this.sending, ctx).catch((e) => {
      if (earlier && 'drop' in earlier) earlier.drop();
      throw e;
    });
    if (!earlier || !('claim' in earlier)) return began;
    if (isA2AError(began) || began.live.stored) earlier.drop();
    else await earlier.claim(began.live.rec.task.id);
    return began;
  }

  /** Lets the agent advance an active task on read; concurrent reads share one observation. */
  private async observe(id: string): Promise<void> {
    const observeHook = this.opts.agent.observe;
    if (!observeHook) return;
    await this.core.live.withLive(
      id,
      () => undefined,
      (live) => {
        if (isFinalState(live.rec.task.status.state)) return;
        if (live.observing) return live.observing;
        const updater = taskUpdater(this.core, live, () => true);
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
        });
        return live.observing;
      },
    );
  }

  private mayAct(caller: Principal): boolean {
    return (this.opts.mayAct ?? isAuthenticated)(caller);
  }

  /**
   * The stored record of a task the caller created, or undefined: another principal's task is
   * answered exactly like a missing one, so its existence does not leak.
   */
  private async owned(id: string, caller: Principal): Promise<TaskRecord | undefined> {
    const rec = await this.coordination.record(id);
    return rec && creatorOf(rec) === ownerKey(caller) ? rec : undefined;
  }
}
