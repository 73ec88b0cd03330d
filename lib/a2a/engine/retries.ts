/**
 * @module lib/a2a/engine/retries — idempotent SendMessage (A2A v1.1 epic #1987): a send that
 * repeats a `messageId` the same caller already sent answers what the first send made instead of
 * running another agent turn. A new task's messageId is kept in the node's retry book
 * (lib/a2a/store/retry-book.ts: durable, shared by a PostgreSQL node's processes, bounded by a
 * window and a count); a continuation's is found in its task's history. The same messageId with
 * another message (a canonical hash differs) is `MESSAGE_ID_REUSED`. Another caller's messageId is
 * another key: it never reaches this caller's task.
 */

import { ownerKey } from '../../auth/principal.ts';
import { A2A_ERRORS, a2aError, type A2AError } from '../errors.ts';
import { messageHash, type RetryBook } from '../store/retry-book.ts';
import type { TaskRecord } from '../store/task-store.ts';
import { isFinalState, withHistoryLength, type Message } from '../types.ts';
import type { EngineCore, TaskCoordination } from './core.ts';
import { finalOnly, type Subscription } from './live-tasks.ts';
import type { SendContext, SendResult } from './send-message.ts';
import { snapshot, taskNotFound } from './task-rules.ts';

/**
 * What a send is, seen from the sends before it: a repeat (answer task `id`), a refusal, or a new
 * send (`claim` records its task once it has one, `drop` when it made none).
 */
export type Earlier =
  | { repeat: string }
  | { claim(taskId: string): Promise<void>; drop(): void }
  | A2AError
  | undefined;

const reused = (): A2AError =>
  a2aError('MESSAGE_ID_REUSED', A2A_ERRORS.MESSAGE_ID_REUSED.message, 'message.messageId');

export class Retries {
  /** New sends of this process between their check and their durable claim, by caller and messageId. */
  private readonly pending = new Map<
    string,
    { hash: string; taskId: Promise<string | undefined> }
  >();

  constructor(
    private readonly book: RetryBook | undefined,
    private readonly core: EngineCore,
    private readonly coordination: TaskCoordination,
    private readonly owned: (
      id: string,
      caller: SendContext['caller'],
    ) => Promise<TaskRecord | undefined>,
  ) {}

  /** Whether `ctx` repeats an earlier send of its caller (see `Earlier`); undefined without a book. */
  async earlier(ctx: SendContext): Promise<Earlier> {
    if (!this.book || !ctx.retry) return undefined;
    const { message } = ctx.params;
    const hash = messageHash(message);
    if (message.taskId) return this.continued(message, hash, ctx);
    const creator = ownerKey(ctx.caller);
    const key = `${creator}\n${message.messageId}`;
    const mine = this.pending.get(key);
    if (mine) {
      if (mine.hash !== hash) return reused();
      const id = await mine.taskId;
      return id ? { repeat: id } : undefined;
    }
    // Held from here, so a second copy arriving meanwhile waits for this one's task.
    let settle!: (id: string | undefined) => void;
    this.pending.set(key, { hash, taskId: new Promise((r) => (settle = r)) });
    const release = (id: string | undefined) => {
      settle(id);
      this.pending.delete(key);
    };
    try {
      const found = await this.book.find(creator, message.messageId);
      if (found && found.hash !== hash) return (release(undefined), reused());
      // The first send's task, if it made one (an agent may answer with a Message, or the
      // process may have stopped before the task's first change): else this send runs again.
      if (found && (await this.exists(found.taskId)))
        return (release(found.taskId), { repeat: found.taskId });
    } catch (e) {
      release(undefined);
      this.core.log('warn', 'reading the retry book failed', { error: (e as Error).message });
      return undefined;
    }
    return {
      claim: async (taskId) => {
        try {
          await this.book!.put(creator, message.messageId, { taskId, hash, at: this.core.now() });
        } catch (e) {
          this.core.log('warn', 'writing the retry book failed', { error: (e as Error).message });
        } finally {
          release(taskId);
        }
      },
      drop: () => release(undefined),
    };
  }

  /** A repeated send's answer: the task as stored now. */
  async answer(id: string, ctx: SendContext): Promise<SendResult | A2AError> {
    const rec = await this.settled(id, ctx);
    if (!rec) return taskNotFound(id, 'message.messageId');
    return { task: withHistoryLength(snapshot(rec.task), ctx.params.configuration.historyLength) };
  }

  /**
   * A repeated streamed send's answer: the task as it now stands, then its live events until it is
   * final; a task already final (terminal or waiting for input) is that one frame.
   */
  async follow(id: string, ctx: SendContext): Promise<Subscription | A2AError> {
    if (!(await this.settled(id, ctx))) return taskNotFound(id, 'message.messageId');
    return this.coordination.watch(
      id,
      (): Subscription | A2AError => taskNotFound(id, 'message.messageId'),
      (live, stop) => {
        if (isFinalState(live.rec.task.status.state)) {
          stop?.();
          return finalOnly(live.rec.task);
        }
        const sub = this.core.live.subscribe(live, stop);
        sub.push({ kind: 'task', task: snapshot(live.rec.task) });
        return sub;
      },
    );
  }

  /** A continuation whose messageId its task already holds is a repeat (or, changed, a refusal). */
  private async continued(message: Message, hash: string, ctx: SendContext): Promise<Earlier> {
    const rec = await this.owned(message.taskId!, ctx.caller);
    const before = rec?.task.history.find(
      (m) => m.messageId === message.messageId && m.role === 'user',
    );
    if (!rec || !before) return undefined;
    return messageHash(before) === hash ? { repeat: rec.task.id } : reused();
  }

  /** A task being made here, or stored. */
  private async exists(id: string): Promise<boolean> {
    return !!this.core.live.get(id) || !!(await this.coordination.record(id));
  }

  /**
   * The record of a repeated send's task once its state is stored; a task still being made here
   * (its agent has reported nothing yet) is stored now, as `submitted`, so the repeat can name it.
   */
  private async settled(id: string, ctx: SendContext): Promise<TaskRecord | undefined> {
    const live = this.core.live.get(id);
    if (live && !live.stored && !live.reply) this.core.live.materialize(live);
    if (live) await live.lastSave.catch(() => {});
    return this.owned(id, ctx.caller);
  }
}
