/**
 * @module node/conformance/mcp-tasks — the fixture's tools for MCP's tasks extension (the
 * conformance suite's `tasks-*` scenarios): `greet` answers at once; `slow_compute`,
 * `failing_job` (task only), `protocol_error_job`, `confirm_delete` and `multi_input` offer to
 * run as tasks (lib/mcp/tasks.ts), the last two waiting for the client's answers through
 * `tasks/update`; `test_tool_with_task` gathers a name over a multi-round-trip request first, then
 * runs as a task.
 */

import type { InputRequest } from '../../lib/mcp/exchange.ts';
import {
  errorResult,
  type InputRequiredResult,
  type McpTool,
  type ToolResult,
} from '../../lib/mcp/protocol.ts';
import type { McpCallContext, ToolRefusal } from '../../lib/mcp/server-types.ts';
import { declaresTasks } from '../../lib/mcp/task-methods.ts';
import type { TaskOffer } from '../../lib/mcp/tasks.ts';

type Answer = ToolResult | InputRequiredResult | ToolRefusal | TaskOffer;
type Run = (args: Record<string, unknown>, ctx: McpCallContext) => Promise<Answer> | Answer;

const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

const ask = (message: string, field: string, type = 'string'): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] },
  },
});

/** One field of an elicitation answer. */
const field = (answer: unknown, name: string): unknown =>
  (answer as { content?: Record<string, unknown> } | undefined)?.content?.[name];

const schema = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  ...(required.length ? { required } : {}),
});

export const TASK_TOOLS: [McpTool, Run][] = [
  [
    {
      name: 'greet',
      description: 'Answers at once with a greeting (never a task)',
      inputSchema: schema({ name: { type: 'string' } }, ['name']),
      annotations: { readOnlyHint: true },
    },
    (args) => text(`Hello, ${String(args.name ?? 'World')}!`),
  ],
  [
    {
      name: 'slow_compute',
      description: 'Works `seconds` seconds, then answers; a task when the client takes tasks',
      inputSchema: schema({ seconds: { type: 'number' }, label: { type: 'string' } }),
      annotations: { readOnlyHint: true },
    },
    (args) => {
      const seconds = Math.min(Math.max(Number(args.seconds) || 0, 0), 300);
      const label = String(args.label ?? 'job').slice(0, 64);
      return {
        task: async (run) => {
          await pause(seconds * 1000, run.signal);
          return text(`Computed ${label} in ${seconds}s`);
        },
      };
    },
  ],
  [
    {
      name: 'failing_job',
      description: 'Runs only as a task; ends with a tool error after a second',
      inputSchema: schema({}),
      annotations: {},
    },
    () => ({
      required: true,
      task: async (run) => {
        await pause(1000, run.signal);
        return errorResult('JOB_FAILED', 'the job failed, as it always does');
      },
    }),
  ],
  [
    {
      name: 'protocol_error_job',
      description: 'Fails with a protocol (JSON-RPC) error; as a task it ends failed',
      inputSchema: schema({}),
      annotations: {},
    },
    () => ({
      task: async () => {
        throw new Error('the job broke');
      },
    }),
  ],
  [
    {
      name: 'confirm_delete',
      description: 'Asks the client to confirm (elicitation), then answers',
      inputSchema: schema({ filename: { type: 'string' } }),
      annotations: { destructiveHint: false },
    },
    (args) => {
      const file = String(args.filename ?? 'file').slice(0, 128);
      return {
        task: async (run) => {
          const got = await run.gather({ confirm: ask(`Delete ${file}?`, 'confirm', 'boolean') });
          if ('resultType' in got) return got;
          if (!got.ok) return errorResult(got.error.code, got.error.message);
          return text(field(got.result.confirm, 'confirm') === true ? `Deleted ${file}` : 'Kept');
        },
      };
    },
  ],
  [
    {
      name: 'multi_input',
      description: 'Asks the client two things at once, then answers',
      inputSchema: schema({}),
      annotations: {},
    },
    () => ({
      task: async (run) => {
        const got = await run.gather({
          name: ask('Your name?', 'name'),
          confirm: ask('Go ahead?', 'confirm', 'boolean'),
        });
        if ('resultType' in got) return got;
        if (!got.ok) return errorResult(got.error.code, got.error.message);
        return text(`Both answered: ${String(field(got.result.name, 'name'))}`);
      },
    }),
  ],
  [
    {
      name: 'test_tool_with_task',
      description: 'Gathers a name (multi-round-trip), then runs as a task (task only)',
      inputSchema: schema({}),
      annotations: {},
    },
    async (_args, ctx) => {
      const never = async () => text('unreachable');
      if (!declaresTasks(ctx)) return { required: true, task: never };
      const got = await ctx.exchange.gather({ user_name: ask('What is your name?', 'name') });
      if ('resultType' in got) return got;
      if (!got.ok) return errorResult(got.error.code, got.error.message);
      const name = String(field(got.result.user_name, 'name') ?? 'friend').slice(0, 64);
      return {
        required: true,
        task: async (run) => {
          await pause(200, run.signal);
          return text(`Hello, ${name}! (from a task)`);
        },
      };
    },
  ],
];
