/**
 * @module lib/a2a/engine/push-configs — a task's webhook registrations: create, read, list and
 * delete, each checked once for push support, the caller's right to act and ownership of the
 * task. Every change goes one path, the coordination's `changePush`, whatever the store.
 */

import type { Principal } from '../../auth/principal.ts';
import { a2aError, isA2AError, type A2AError } from '../errors.ts';
import type { TaskRecord } from '../store/task-store.ts';
import type { ProtocolVersion, PushConfig } from '../types.ts';
import type { PushSender, TaskCoordination } from './core.ts';
import {
  pushCountProblem,
  taskNotFound,
  unauthenticated,
  withPush,
  type PushConfigInput,
} from './task-rules.ts';

export interface PushConfigsOptions {
  push: PushSender | undefined;
  coordination: TaskCoordination;
  /** Most registrations one task may hold. */
  max: number;
  mayAct(caller: Principal): boolean;
  /** The stored record of a task the caller created, or undefined. */
  owned(id: string, caller: Principal): Promise<TaskRecord | undefined>;
}

/** The check of a webhook URL's host name once resolved, as at delivery (after `pushProblem` passed). */
export async function pushHostProblem(
  push: PushSender | undefined,
  url: string,
  field = 'url',
): Promise<A2AError | undefined> {
  const why = await push?.refuseResolved?.(url);
  return why ? a2aError('INVALID_PARAMS', why.message, field) : undefined;
}

/** The one check of push support, and of a webhook address when there is one. */
export function pushProblem(
  push: PushSender | undefined,
  url?: string,
  field = 'url',
): A2AError | undefined {
  if (!push) return a2aError('PUSH_NOTIFICATION_NOT_SUPPORTED');
  const why = url === undefined ? undefined : push.refuse(url);
  return why ? a2aError('INVALID_PARAMS', why.message, field) : undefined;
}

export class PushConfigs {
  constructor(private readonly opts: PushConfigsOptions) {}

  async set(
    cfg: PushConfigInput,
    version: ProtocolVersion,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    const problem = pushProblem(this.opts.push, cfg.url);
    if (problem) return problem;
    if (!this.opts.mayAct(caller)) return unauthenticated('A webhook registration', caller);
    if (!(await this.opts.owned(cfg.taskId, caller))) return taskNotFound(cfg.taskId, 'taskId');
    const host = await pushHostProblem(this.opts.push, cfg.url);
    if (host) return host;
    let stored: PushConfig | undefined;
    const out = await this.opts.coordination.changePush(cfg.taskId, (push) => {
      const tooMany = pushCountProblem(push, cfg, this.opts.max);
      if (tooMany) return tooMany;
      const next = withPush(push, cfg, version);
      stored = next.stored;
      return next.push;
    });
    return isA2AError(out) ? out : stored!;
  }

  /** One webhook registration, token included: only the task's creator gets here. */
  async get(
    taskId: string,
    id: string | undefined,
    caller: Principal,
  ): Promise<PushConfig | A2AError> {
    const off = pushProblem(this.opts.push);
    if (off) return off;
    const rec = await this.opts.owned(taskId, caller);
    if (!rec) return taskNotFound(taskId, 'taskId');
    const cfg = id === undefined ? rec.push[0] : rec.push.find((p) => p.id === id);
    return cfg ?? a2aError('TASK_NOT_FOUND', `Push config not found: ${id ?? '(none)'}`, 'id');
  }

  /** The task's webhook registrations without their tokens (a list never shows a secret). */
  async list(taskId: string, caller: Principal): Promise<PushConfig[] | A2AError> {
    const off = pushProblem(this.opts.push);
    if (off) return off;
    const rec = await this.opts.owned(taskId, caller);
    if (!rec) return taskNotFound(taskId, 'taskId');
    return rec.push.map(({ token: _token, ...rest }) => rest);
  }

  /** Idempotent: deleting a config that is already gone succeeds. */
  async delete(taskId: string, id: string, caller: Principal): Promise<null | A2AError> {
    const off = pushProblem(this.opts.push);
    if (off) return off;
    if (!this.opts.mayAct(caller))
      return unauthenticated('Deleting a webhook registration', caller);
    if (!(await this.opts.owned(taskId, caller))) return taskNotFound(taskId, 'taskId');
    const out = await this.opts.coordination.changePush(taskId, (push) =>
      push.filter((p) => p.id !== id),
    );
    return isA2AError(out) ? out : null;
  }
}
