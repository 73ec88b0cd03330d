/**
 * @module hub/mcp/work-tools — the hub's work as MCP tools: `ask` (the Ask Agent: a question
 * planned over the fleet's read-only tools), `delegate` (task.delegate: a hub task that hands the
 * job to an executor, answered once the job is submitted with the task and how to read it — or, to
 * a client that takes MCP tasks, an MCP task that follows it to its end) and `get_task` (a hub
 * task of the caller's, read as the A2A GetTask reads it, which advances a delegation). The task
 * is the caller's like any A2A task: another principal's id is not found.
 */

import { mayWrite } from '../../lib/auth/scopes.ts';
import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import type { TaskEngine } from '../../lib/a2a/engine/engine.ts';
import { isA2AError, type A2AError } from '../../lib/a2a/errors.ts';
import { parseSendParamsV1, taskToV1 } from '../../lib/a2a/wire/v1.ts';
import type { ArgSpec } from '../../lib/catalog/catalog.ts';
import { errorResult, okResult, type McpTool, type ToolResult } from '../../lib/mcp/protocol.ts';
import type { TaskOffer } from '../../lib/mcp/tasks.ts';
import { childContext, currentTrace, withTrace } from '../../lib/telemetry/trace-context.ts';
import type { AskAnswer } from '../workbench/ask.ts';
import { UNAUTHENTICATED_TOOL } from './fleet-tools.ts';
import { followTask } from './task-follow.ts';
import { schemaOf } from './tool-names.ts';

export interface WorkToolsDeps {
  ask: (question: string) => Promise<AskAnswer>;
  /** The hub node's task engine (its tasks, their owners, delegation's lazy advance). */
  engine: () => TaskEngine;
  /** task.delegate's argument specs, as the hub's catalog declares them. */
  delegateArgs: Record<string, ArgSpec>;
  /** How often a delegation run as an MCP task reads its hub task, in ms (default 1 s). */
  pollMs?: number;
}

const ASK_ARGS: Record<string, ArgSpec> = {
  question: {
    type: 'string',
    description: 'A question about the fleet, in plain words',
    required: true,
    maxLength: 2000,
  },
};
const TASK_ARGS: Record<string, ArgSpec> = {
  id: {
    type: 'string',
    description: 'The task id delegate answered',
    required: true,
    maxLength: 128,
  },
  historyLength: {
    type: 'integer',
    description: 'How many history messages to include (default all)',
  },
};

/** An A2A error as a tool's coded failure. */
const a2aFailure = (e: A2AError) => errorResult(e.code, e.message, e.field);

/** Starts a delegation: the hub task, or the tool's coded failure. */
async function startDelegation(
  deps: WorkToolsDeps,
  args: Record<string, unknown>,
  caller: Principal,
): Promise<{ id: string; task: ToolResult } | ToolResult> {
  const params = parseSendParamsV1({
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'task.delegate', args } }],
    },
  });
  if (isA2AError(params)) return a2aFailure(params);
  const sent = await withTrace(childContext(currentTrace()), () =>
    deps.engine().send({ params, version: '1.0', caller }),
  );
  if (isA2AError(sent)) return a2aFailure(sent);
  if (!('task' in sent)) return errorResult('DELEGATE_NO_TASK', 'the hub answered without a task');
  const task = taskToV1(sent.task);
  return {
    id: sent.task.id,
    task: okResult({ task, read: { name: 'get_task', arguments: { id: sent.task.id } } }),
  };
}

/**
 * `delegate`: to a client that takes MCP tasks, a task that follows the hub task to its end
 * (hub/mcp/task-follow.ts); to any other, the hub task at once, to read with get_task.
 */
const delegate = (
  deps: WorkToolsDeps,
  args: Record<string, unknown>,
  caller: Principal,
): TaskOffer => ({
  inline: async () => {
    const started = await startDelegation(deps, args, caller);
    return 'id' in started ? started.task : started;
  },
  task: async (run) => {
    const started = await startDelegation(deps, args, caller);
    if (!('id' in started)) return started;
    return followTask(deps.engine, started.id, caller, run, deps.pollMs ?? 1_000);
  },
});

export function createWorkTools(deps: WorkToolsDeps) {
  const tools: McpTool[] = [
    {
      name: 'ask',
      title: 'Ask the fleet',
      description:
        "Asks the hub's Ask Agent a question: it picks the fleet's read-only tools that fit, calls them and answers with the facts it found.",
      inputSchema: schemaOf(ASK_ARGS),
      annotations: { title: 'Ask the fleet', readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'delegate',
      title: 'Delegate a job',
      description:
        'Hands a job to an executor node (task.delegate) and answers at once with the hub task; read it with get_task until its state is completed, failed, canceled, rejected or input-required.',
      inputSchema: schemaOf(deps.delegateArgs),
      annotations: {
        title: 'Delegate a job',
        readOnlyHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    {
      name: 'get_task',
      title: 'Read a task',
      description:
        "Reads one of your hub tasks (a delegation advances when read): its state, the executor's job and, once done, its artifacts.",
      inputSchema: schemaOf(TASK_ARGS),
      annotations: { title: 'Read a task', readOnlyHint: true, openWorldHint: false },
    },
  ];

  async function getTask(args: Record<string, unknown>, caller: Principal): Promise<ToolResult> {
    if (typeof args.id !== 'string' || !args.id || args.id.length > 128)
      return errorResult('BAD_ARGS', 'id must be a task id');
    const h = args.historyLength;
    if (h !== undefined && (!Number.isInteger(h) || (h as number) < 0))
      return errorResult('BAD_ARGS', 'historyLength must be a non-negative integer');
    const t = await deps.engine().getTask(args.id, h as number | undefined, caller);
    return isA2AError(t) ? a2aFailure(t) : okResult({ task: taskToV1(t) });
  }

  return {
    list(caller: Principal): McpTool[] {
      return tools.filter(
        (t) => t.annotations.readOnlyHint || (isAuthenticated(caller) && mayWrite(caller)),
      );
    },
    async call(
      name: string,
      args: Record<string, unknown>,
      caller: Principal,
    ): Promise<ToolResult | TaskOffer | undefined> {
      switch (name) {
        case 'ask': {
          const q = args.question;
          if (typeof q !== 'string' || !q.trim() || q.length > 2000)
            return errorResult(
              'BAD_ARGS',
              'question must be a non-empty string of at most 2000 characters',
            );
          return okResult(await withTrace(childContext(currentTrace()), () => deps.ask(q)));
        }
        case 'delegate':
          if (!isAuthenticated(caller)) return UNAUTHENTICATED_TOOL(name);
          return mayWrite(caller)
            ? delegate(deps, args, caller)
            : errorResult('INSUFFICIENT_SCOPE', `${name} needs the scope a2a.write`);
        case 'get_task':
          return getTask(args, caller);
        default:
          return undefined;
      }
    },
  };
}
