/**
 * @module lib/mcp/task-methods — MCP's tasks extension on the wire (2026-07-28): a tool's offer to
 * run as a task (lib/mcp/tasks.ts) answered as a `CreateTaskResult` to a request that declared the
 * extension in its `_meta` capabilities, run inline for any other (or refused with -32021 when the
 * tool needs a task), and `tasks/get`, `tasks/update`, `tasks/cancel` for the declaring client's
 * own tasks. An unknown task id and another principal's are the same -32602; `tasks/result` and
 * `tasks/list` do not exist (-32601). The session revisions (2025-11-25) know none of this.
 */

import { ownerKey } from '../auth/principal.ts';
import { isPlainObject } from '../json/guards.ts';
import { answer, failure, rpcError, type RpcAnswer, type RpcError, type RpcId } from './jsonrpc.ts';
import { RPC } from './protocol.ts';
import type { McpCallContext } from './server-types.ts';
import { TASKS_EXTENSION, type TaskOffer, type TaskRun, type TaskTable } from './tasks.ts';

/** The longest task id read (ours are UUIDs). */
const MAX_TASK_ID = 128;

/** Whether this request declared the tasks extension (only the stateless revision can). */
export function declaresTasks(ctx: McpCallContext): boolean {
  if (ctx.session) return false;
  const ext = ctx.exchange.clientCapabilities.extensions;
  return isPlainObject(ext) && ext[TASKS_EXTENSION] !== undefined;
}

const needsTasks = (id: RpcId, message: string): RpcAnswer =>
  failure(id, {
    code: RPC.MISSING_CLIENT_CAPABILITY,
    message,
    data: {
      code: 'MCP_MISSING_CAPABILITY',
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  } as RpcError);

const owner = (ctx: McpCallContext) => ctx.owner ?? ownerKey(ctx.caller);

/** The work run inline: the request's own exchange asks the client. */
const inlineRun = (ctx: McpCallContext): TaskRun => ({
  signal: ctx.exchange.signal,
  gather: (requests) => ctx.exchange.gather(requests),
  say: () => {},
});

/** A tool's offer answered: a task for a declaring client, else inline, else -32021. */
export async function offerAnswer(
  table: TaskTable | undefined,
  id: RpcId,
  offer: TaskOffer,
  ctx: McpCallContext,
): Promise<RpcAnswer> {
  if (table && declaresTasks(ctx)) {
    const made = table.start(owner(ctx), offer.task, ctx.exchange.clientCapabilities);
    if (!made.ok)
      return failure(id, rpcError(RPC.INVALID_REQUEST, made.error.message, made.error.code));
    return answer(id, { resultType: 'task', ...made.result });
  }
  if (offer.required)
    return needsTasks(
      id,
      `this tool runs only as a task: declare the ${TASKS_EXTENSION} extension`,
    );
  return answer(id, await (offer.inline ?? (() => offer.task(inlineRun(ctx))))());
}

const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** `tasks/get`, `tasks/update`, `tasks/cancel`; undefined for any other method (or revision). */
export function taskMethod(
  table: TaskTable | undefined,
  id: RpcId,
  method: string,
  p: Record<string, unknown>,
  ctx: McpCallContext,
): RpcAnswer | undefined {
  if (!table || ctx.session || !TASK_METHODS.has(method)) return undefined;
  if (!declaresTasks(ctx))
    return needsTasks(id, `${method} needs the ${TASKS_EXTENSION} extension declared`);
  const taskId = p.taskId;
  if (typeof taskId !== 'string' || !taskId || taskId.length > MAX_TASK_ID)
    return failure(
      id,
      rpcError(RPC.INVALID_PARAMS, 'params.taskId must be a task id', 'MCP_BAD_PARAMS'),
    );
  // Another principal's task and one that never was (or is gone) answer alike.
  const unknown = () =>
    failure(id, rpcError(RPC.INVALID_PARAMS, 'Unknown task', 'MCP_UNKNOWN_TASK'));
  const who = owner(ctx);
  switch (method) {
    case 'tasks/get': {
      const view = table.get(who, taskId);
      return view ? answer(id, { resultType: 'complete', ...view }) : unknown();
    }
    case 'tasks/update': {
      if (!isPlainObject(p.inputResponses))
        return failure(
          id,
          rpcError(RPC.INVALID_PARAMS, 'params.inputResponses must be an object', 'MCP_BAD_PARAMS'),
        );
      return table.update(who, taskId, p.inputResponses)
        ? answer(id, { resultType: 'complete' })
        : unknown();
    }
    default:
      return table.cancel(who, taskId) ? answer(id, { resultType: 'complete' }) : unknown();
  }
}
