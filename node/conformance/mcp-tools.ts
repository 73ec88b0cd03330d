/**
 * @module node/conformance/mcp-tools — the tools the official MCP conformance suite
 * (@modelcontextprotocol/conformance) calls on a server: each kind of content, logging and progress
 * during a call, an error result, and the server asking its client (sampling, elicitation with
 * defaults and with every enum form), plus a tool whose schema keeps JSON Schema 2020-12's
 * keywords, and the tasks extension's tools (node/conformance/mcp-tasks.ts). Served through
 * lib/mcp like any toolbox.
 */

import { errorResult, type McpTool, type ToolResult } from '../../lib/mcp/protocol.ts';
import type { McpCallContext, McpToolbox } from '../../lib/mcp/server-types.ts';
import { ROUND_TOOLS } from './mcp-rounds.ts';
import { TASK_TOOLS } from './mcp-tasks.ts';
import { ELICIT_DEFAULTS, ELICIT_ENUMS, PNG_BASE64, WAV_BASE64 } from './mcp-schemas.ts';

const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

const NO_ARGS = { type: 'object' as const, properties: {} };
const oneString = (name: string, description: string) => ({
  type: 'object' as const,
  properties: { [name]: { type: 'string', description } },
  required: [name],
});

type Run = (args: Record<string, unknown>, ctx: McpCallContext) => Promise<ToolResult> | ToolResult;

/** Asks the client through `elicitation/create` and says what it answered. */
const elicit =
  (message: string | ((a: Record<string, unknown>) => string), schema: object, said: string) =>
  async (args: Record<string, unknown>, ctx: McpCallContext) => {
    const asked = await ctx.exchange.ask('elicitation/create', {
      message: typeof message === 'string' ? message : message(args),
      requestedSchema: schema,
    });
    if (!asked.ok) return errorResult(asked.error.code, asked.error.message);
    const r = asked.result as { action?: unknown; content?: unknown };
    return text(`${said}: action=${String(r.action)}, content=${JSON.stringify(r.content ?? {})}`);
  };

const TOOLS: [McpTool, Run][] = [
  [
    {
      name: 'test_simple_text',
      description: 'Tests simple text content response',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => text('This is a simple text response for testing.'),
  ],
  [
    {
      name: 'test_image_content',
      description: 'Tests image content response',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
  ],
  [
    {
      name: 'test_audio_content',
      description: 'Tests audio content response',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  ],
  [
    {
      name: 'test_embedded_resource',
      description: 'Tests embedded resource content response',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  ],
  [
    {
      name: 'test_multiple_content_types',
      description: 'Tests response with multiple content types (text, image, resource)',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  ],
  [
    {
      name: 'test_tool_with_logging',
      description: 'Tests tool that emits log messages during execution',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    async (_args, { exchange }) => {
      for (const [i, step] of ['started', 'processing data', 'completed'].entries()) {
        if (i > 0) await pause(50, exchange.signal);
        exchange.log('info', `Tool execution ${step}`);
      }
      return text('Tool with logging executed successfully');
    },
  ],
  [
    {
      name: 'test_tool_with_progress',
      description: 'Tests tool that reports progress notifications',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    async (_args, { exchange }) => {
      for (const done of [0, 50, 100]) {
        if (done > 0) await pause(50, exchange.signal);
        exchange.progress(done, 100, `Completed step ${done} of 100`);
      }
      return text(String(exchange.meta.progressToken ?? 0));
    },
  ],
  [
    {
      name: 'test_error_handling',
      description: 'Tests error response handling',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => errorResult('TEST_ERROR', 'This tool intentionally returns an error for testing'),
  ],
  [
    {
      name: 'test_reconnection',
      description:
        'Tests SSE stream disconnection and reconnection (SEP-1699); this server keeps no event history, so it answers on the stream it has',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    () => text('Reconnection test completed successfully.'),
  ],
  [
    {
      name: 'test_sampling',
      description: 'Tests server-initiated sampling (LLM completion request)',
      inputSchema: oneString('prompt', 'The prompt to send to the LLM'),
      annotations: {},
    },
    async (args, { exchange }) => {
      const asked = await exchange.ask('sampling/createMessage', {
        messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }],
        maxTokens: 100,
      });
      if (!asked.ok) return errorResult(asked.error.code, asked.error.message);
      const r = asked.result as { content?: { text?: unknown } };
      return text(`LLM response: ${String(r.content?.text ?? 'No response')}`);
    },
  ],
  [
    {
      name: 'test_elicitation',
      description: 'Tests server-initiated elicitation (user input request)',
      inputSchema: oneString('message', 'The message to show the user'),
      annotations: {},
    },
    elicit(
      (a) => String(a.message ?? ''),
      {
        type: 'object',
        properties: { response: { type: 'string', description: "User's response" } },
        required: ['response'],
      },
      'User response',
    ),
  ],
  [
    {
      name: 'test_elicitation_sep1034_defaults',
      description: 'Tests elicitation with default values per SEP-1034',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    elicit(
      'Please review and update the form fields with defaults',
      ELICIT_DEFAULTS,
      'Elicitation completed',
    ),
  ],
  [
    {
      name: 'test_elicitation_sep1330_enums',
      description: 'Tests elicitation with enum schema improvements per SEP-1330',
      inputSchema: NO_ARGS,
      annotations: {},
    },
    elicit('Please select options from the enum fields', ELICIT_ENUMS, 'Elicitation completed'),
  ],
  [
    {
      name: 'test_param_header',
      description: 'An argument mirrored in the Mcp-Param-Region header (SEP-2243)',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', description: 'A region', 'x-mcp-header': 'Region' },
        },
        required: ['region'],
      },
      annotations: {},
    },
    (args) => text(`Region: ${String(args.region)}`),
  ],
  [
    {
      name: 'json_schema_2020_12_tool',
      description:
        'Tool with JSON Schema 2020-12 features (SEP-1613), composition, conditionals and $anchor (SEP-2106)',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      },
      annotations: {},
    },
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  ],
];

const ALL: [
  McpTool,
  (
    args: Record<string, unknown>,
    ctx: McpCallContext,
  ) => ReturnType<McpToolbox['call']> | Awaited<ReturnType<McpToolbox['call']>>,
][] = [
  ...TOOLS,
  ...ROUND_TOOLS.map(([tool, run]): (typeof ALL)[number] => [tool, (_args, ctx) => run(ctx)]),
  ...TASK_TOOLS,
];

export const conformanceTools: McpToolbox = {
  list: async () => ALL.map(([tool]) => tool),
  call: async (name, args, ctx) => {
    const found = ALL.find(([tool]) => tool.name === name);
    return found ? found[1](args, ctx) : undefined;
  },
};
