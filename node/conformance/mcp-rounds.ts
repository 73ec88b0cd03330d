/**
 * @module node/conformance/mcp-rounds — the fixture's tools and prompt for MCP 2026-07-28's
 * multi-round-trip requests (the conformance suite's `input-required-result-*` and `server-stateless`
 * scenarios): each asks its client through `exchange.gather` — an `InputRequiredResult` over the
 * stateless revision, the server's own requests over a session — with `requestState` sealed
 * (lib/mcp/request-state.ts) where a round carries state, a tool that needs a capability the client
 * lacks (-32021), and the diagnostic tools for request-scoped progress and logs.
 */

import type { InputRequest } from '../../lib/mcp/exchange.ts';
import {
  errorResult,
  type InputRequiredResult,
  type McpTool,
  type PromptMessage,
  type ToolResult,
} from '../../lib/mcp/protocol.ts';
import { createStateSeal } from '../../lib/mcp/request-state.ts';
import type { McpCallContext, ToolRefusal } from '../../lib/mcp/server-types.ts';

type Answer = ToolResult | InputRequiredResult | ToolRefusal;
type Run = (ctx: McpCallContext) => Promise<Answer> | Answer;

const seal = createStateSeal();
const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });
const NO_ARGS = { type: 'object' as const, properties: {} };

const form = (message: string, field: string, type = 'string'): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] },
  },
});
const sample = (prompt: string, maxTokens: number): InputRequest => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
});
const ROOTS: InputRequest = { method: 'roots/list', params: {} };

/** One field of an elicitation answer, or of a sampling answer's text. */
const field = (answer: unknown, name: string): string => {
  const content = (answer as { content?: Record<string, unknown> } | undefined)?.content;
  const v = content?.[name];
  return typeof v === 'string' ? v : String(v ?? 'unknown');
};
const rootCount = (answer: unknown) => {
  const roots = (answer as { roots?: unknown } | undefined)?.roots;
  return Array.isArray(roots) ? roots.length : 0;
};

/**
 * One round: the client's answers to `requests`, or what the method returns instead (the input
 * still required, with `state` sealed into it, or the failure to ask).
 */
async function round(
  ctx: McpCallContext,
  requests: Record<string, InputRequest>,
  state?: Record<string, unknown>,
): Promise<{ answers: Record<string, unknown> } | { instead: Answer }> {
  const got = await ctx.exchange.gather(requests);
  if ('resultType' in got)
    return { instead: state ? { ...got, requestState: seal.seal(state) } : got };
  if (!got.ok) return { instead: errorResult(got.error.code, got.error.message) };
  return { answers: got.result };
}

const isRefusal = (v: unknown): v is ToolRefusal =>
  typeof v === 'object' && v !== null && 'refuse' in v;

/** The state an earlier round sealed; a refusal when the client altered it. */
function stateOf(ctx: McpCallContext): Record<string, unknown> | ToolRefusal | undefined {
  const raw = ctx.exchange.requestState;
  if (raw === undefined) return undefined;
  return (
    seal.open(raw) ?? { refuse: 'invalid-params', message: 'requestState integrity check failed' }
  );
}

/** A confirmation round whose answer counts only with the state it was asked under. */
const confirmed =
  (kind: string, done: string): Run =>
  async (ctx) => {
    const state = stateOf(ctx);
    if (isRefusal(state)) return state;
    const r = await round(ctx, { confirm: form('Please confirm', 'ok', 'boolean') }, { kind });
    if ('instead' in r) return r.instead;
    if (ctx.session || state?.kind === kind) return text(done);
    return { refuse: 'invalid-params', message: 'requestState is missing or of another request' };
  };

const TOOLS: [string, string, Run][] = [
  [
    'test_missing_capability',
    'Needs the client to declare sampling (-32021 otherwise)',
    (ctx) =>
      ctx.exchange.clientCapabilities.sampling
        ? text('Success')
        : {
            refuse: 'missing-capability',
            message: 'Server requires the sampling capability for this request',
            requiredCapabilities: { sampling: {} },
          },
  ],
  [
    'test_input_required_result_elicitation',
    'MRTR: asks for a name (elicitation)',
    async (ctx) => {
      const r = await round(ctx, { user_name: form('What is your name?', 'name') });
      return 'instead' in r ? r.instead : text(`Hello, ${field(r.answers.user_name, 'name')}!`);
    },
  ],
  [
    'test_input_required_result_sampling',
    'MRTR: asks for a completion (sampling)',
    async (ctx) => {
      const r = await round(ctx, { sample_request: sample('What is the capital of France?', 100) });
      return 'instead' in r
        ? r.instead
        : text(`Sampling result: ${field(r.answers.sample_request, 'text')}`);
    },
  ],
  [
    'test_input_required_result_list_roots',
    'MRTR: asks for the client roots',
    async (ctx) => {
      const r = await round(ctx, { roots_request: ROOTS });
      return 'instead' in r
        ? r.instead
        : text(`Found ${rootCount(r.answers.roots_request)} root(s)`);
    },
  ],
  [
    'test_input_required_result_request_state',
    'MRTR: a round with requestState',
    confirmed('request-state', 'state-ok: requestState validated'),
  ],
  [
    'test_input_required_result_tampered_state',
    'MRTR: requestState sealed; an altered one is refused',
    confirmed('tamper-test', 'integrity-ok: state verified'),
  ],
  [
    'test_input_required_result_multiple_inputs',
    'MRTR: three input requests in one round',
    async (ctx) => {
      const r = await round(
        ctx,
        {
          user_name: form('What is your name?', 'name'),
          greeting: sample('Generate a greeting', 50),
          client_roots: ROOTS,
        },
        { kind: 'multiple-inputs' },
      );
      if ('instead' in r) return r.instead;
      const a = r.answers;
      return text(
        `Name: ${field(a.user_name, 'name')}; Greeting: ${field(a.greeting, 'text')}; Roots: ${rootCount(a.client_roots)}`,
      );
    },
  ],
  ['test_input_required_result_multi_round', 'MRTR: two rounds, state carried', multiRound],
  [
    'test_input_required_result_capabilities',
    'MRTR: asks only for what the client declared',
    async (ctx) => {
      const caps = ctx.exchange.clientCapabilities;
      const asks: Record<string, InputRequest> = {};
      if (caps.elicitation) asks.elicit_input = form('Elicitation input', 'value');
      if (caps.sampling) asks.sample_input = sample('Sample request', 50);
      if (Object.keys(asks).length === 0) return text('No supported capabilities declared');
      const r = await round(ctx, asks, { kind: 'capabilities-test' });
      return 'instead' in r
        ? r.instead
        : text(`capabilities-ok: received ${Object.keys(r.answers).join(',')}`);
    },
  ],
  [
    'test_streaming_elicitation',
    'Progress on the request stream, then the result (no request of the server)',
    (ctx) => {
      ctx.exchange.progress(50, 100);
      return text('Streaming complete');
    },
  ],
  [
    'test_logging_tool',
    'Logs at info, only to a request that asked for logs',
    (ctx) => {
      ctx.exchange.log('info', 'Diagnostic trace logging activated');
      return text('Logging evaluated');
    },
  ],
];

/** Two rounds: a name, then a colour, the name carried in the sealed state between them. */
async function multiRound(ctx: McpCallContext): Promise<Answer> {
  const state = stateOf(ctx);
  if (isRefusal(state)) return state;
  let name = typeof state?.name === 'string' ? state.name : 'friend';
  if (state?.round !== 2) {
    const first = await round(
      ctx,
      { step1: form('Step 1: What is your name?', 'name') },
      { round: 1 },
    );
    if ('instead' in first) return first.instead;
    name = field(first.answers.step1, 'name');
  }
  const color = form('Step 2: What is your favorite color?', 'color');
  const second = await round(ctx, { step2: color }, { round: 2, name });
  if ('instead' in second) return second.instead;
  return text(`Multi-round complete for ${name} who likes ${field(second.answers.step2, 'color')}`);
}

export const ROUND_TOOLS: [McpTool, Run][] = TOOLS.map(([name, description, run]) => [
  { name, description, inputSchema: NO_ARGS, annotations: {} },
  run,
]);

/** `test_input_required_result_prompt`: a prompt that needs a word from the user first. */
export async function roundPrompt(
  ctx: McpCallContext,
): Promise<{ messages: PromptMessage[] } | InputRequiredResult | string> {
  const r = await round(ctx, {
    user_context: form('What context should the prompt use?', 'context'),
  });
  if ('instead' in r)
    return 'resultType' in r.instead
      ? (r.instead as InputRequiredResult)
      : 'the client cannot answer';
  const context = field(r.answers.user_context, 'context');
  return {
    messages: [
      { role: 'user', content: { type: 'text', text: `Prompt with context: ${context}` } },
    ],
  };
}
