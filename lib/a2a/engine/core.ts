/**
 * @module lib/a2a/engine/core — what the parts of the task engine share: the dependencies every
 * part reads (`EngineCore`) and the one interface behind which a store used by this process alone
 * and a store shared by several processes of the node differ (`TaskCoordination`).
 */

import type { Failure } from '../../errors/result.ts';
import type { Agent } from '../agent.ts';
import type { A2AError } from '../errors.ts';
import type { TaskRecord, TaskStore } from '../store/task-store.ts';
import type { Message, ProtocolVersion, PushConfig, Task, TaskEvent } from '../types.ts';
import type { Log } from '../../log.ts';
import type { Live, LiveTasks } from './live-tasks.ts';
import type { PushConfigInput, TaskLimits } from './task-rules.ts';

/** Why a webhook URL is refused: not a URL, not http(s), carrying credentials, or not a public address. */
export type WebhookUrlFailure = Failure<
  'WEBHOOK_URL_INVALID' | 'WEBHOOK_URL_SCHEME' | 'WEBHOOK_URL_CREDENTIALS' | 'ADDRESS_REFUSED'
>;

/** Delivers task events to webhooks; see lib/a2a/push/delivery.ts. */
export interface PushSender {
  /** Why a webhook URL is refused (its field `url`), or undefined when it is allowed. */
  refuse(url: string): WebhookUrlFailure | undefined;
  /**
   * Why a webhook URL that `refuse` passed is refused once its host name is resolved (a name for
   * a non-public address), or undefined; asked after the caller's right to act is checked.
   */
  refuseResolved?(url: string): Promise<WebhookUrlFailure | undefined>;
  notify(configs: readonly PushConfig[], event: TaskEvent): void;
}

/** The dependencies the engine's parts read; one object, made once by the engine. */
export interface EngineCore {
  readonly store: TaskStore;
  readonly agent: Agent;
  readonly log: Log;
  readonly now: () => number;
  readonly limits: TaskLimits;
  readonly live: LiveTasks;
  readonly push: PushSender | undefined;
}

/** A change of a task's push configs: the new list, or the refusal. */
export type PushChange = (push: PushConfig[]) => PushConfig[] | A2AError;

/**
 * How the engine reads and changes stored tasks. Alone on its store (lib/a2a/engine/local-tasks.ts)
 * the live copy is the truth; on a store shared by several processes of the node
 * (lib/a2a/engine/shared-tasks.ts) a task whose turn runs elsewhere is read and changed under
 * the store's row lock, and other processes' events reach this process's streams.
 */
export interface TaskCoordination {
  /** The newest record of a stored task, or undefined (a brand-new task not yet stored is not). */
  record(id: string): Promise<TaskRecord | undefined>;
  /**
   * The task a message continues, with the message added to its history and the task held for
   * the turn about to run; or the refusal (also when the task is not at `ifGenerationMatch`).
   */
  continuation(message: Message, ifGenerationMatch?: number): Promise<Live | A2AError>;
  /** Cancels a task that is not yet terminal; a repeat cancel returns the canceled task. */
  cancel(id: string): Promise<Task | A2AError>;
  /**
   * Runs `fn` with the live state of a task a new subscriber will follow; `stop` is the subscriber's
   * close hook. `missing` answers for a task that is not stored.
   */
  watch<T>(
    id: string,
    missing: () => T,
    fn: (live: Live, stop: (() => void) | undefined) => T | Promise<T>,
  ): Promise<T>;
  /** Changes a task's push configs and stores them; the task's live copy follows. */
  changePush(taskId: string, change: PushChange): Promise<PushConfig[] | A2AError>;
  /** Adds the push config a SendMessage carried to the task it starts or continues. */
  pushOnSend(
    live: Live,
    cfg: Omit<PushConfigInput, 'taskId'>,
    version: ProtocolVersion,
  ): Promise<void>;
  /** A turn of this process starts or ends on a task. */
  turnStarted(id: string): void;
  turnEnded(id: string): void;
  /** Starts a streamed turn and resolves when its stream may answer. */
  openStream(live: Live, startTurn: () => Promise<void>): Promise<void>;
}
