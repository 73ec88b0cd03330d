/**
 * @module node/conformance — an agent for the A2A conformance kit (a2a-tck). It follows the kit's
 * in-band scenario table: the prefix of each message's `messageId` picks the behaviour, for a
 * follow-up on an existing task as much as for a new one. A message with no known prefix ends
 * as each kit's reference agent ends it: over A2A 1.0 its task completes with an echo, over 0.3
 * it stays `working` until it is continued or canceled. At `/mcp` it is the fixture of the
 * official MCP conformance suite: the tools, resources and prompts its server scenarios call
 * (node/conformance/), served through lib/mcp.
 */

import type { Agent, AgentContext } from '../lib/a2a/agent.ts';
import { capability } from '../lib/catalog/capability.ts';
import { defineNode } from '../lib/node/define-node.ts';
import { conformanceTools } from './conformance/mcp-tools.ts';
import {
  conformanceCompletions,
  conformancePrompts,
  conformanceResources,
} from './conformance/mcp-shelf.ts';

/** How long a resubscribe scenario stays alive: at least twice the kit's 2 s streaming timeout. */
const RESUBSCRIBE_HOLD_MS = 5000;

const waitOrAbort = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

const workThenArtifact = (ctx: AgentContext) => {
  ctx.working();
  ctx.artifact(
    { name: 'result', parts: [{ text: 'Streaming artifact from TCK' }] },
    { lastChunk: true },
  );
  ctx.complete();
};

/** Longest prefixes first, so `tck-artifact-file-url` is not taken for `tck-artifact-file`. */
const SCENARIOS: [prefix: string, run: (ctx: AgentContext) => void | Promise<void>][] = [
  ['tck-complete-task', (ctx) => ctx.complete('Hello from TCK')],
  [
    'tck-artifact-text',
    (ctx) => {
      ctx.artifact(
        { name: 'text-artifact', parts: [{ text: 'Generated text content' }] },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
  [
    'tck-artifact-file-url',
    (ctx) => {
      ctx.artifact(
        {
          name: 'file-url-artifact',
          parts: [
            {
              url: 'https://example.com/output.txt',
              filename: 'output.txt',
              mediaType: 'text/plain',
            },
          ],
        },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
  [
    'tck-artifact-file',
    (ctx) => {
      const raw = Buffer.from('file content from TCK').toString('base64');
      ctx.artifact(
        {
          name: 'file-artifact',
          parts: [{ raw, filename: 'output.txt', mediaType: 'text/plain' }],
        },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
  [
    'tck-artifact-data',
    (ctx) => {
      ctx.artifact(
        {
          name: 'data-artifact',
          parts: [{ data: { key: 'value', count: 42 }, mediaType: 'application/json' }],
        },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
  ['tck-message-response', (ctx) => ctx.reply('Direct message response')],
  ['tck-input-required', (ctx) => ctx.requireInput('Please provide additional input')],
  ['tck-reject-task', (ctx) => ctx.reject('Task rejected by TCK agent')],
  [
    'tck-stream-artifact-chunked',
    (ctx) => {
      ctx.working();
      const a = ctx.artifact(
        { name: 'chunked', parts: [{ text: 'first chunk ' }] },
        { append: false },
      );
      ctx.artifact(
        { artifactId: a.artifactId, name: 'chunked', parts: [{ text: 'second chunk' }] },
        { append: true, lastChunk: true },
      );
      ctx.complete();
    },
  ],
  ['tck-stream-artifact-text', workThenArtifact],
  [
    'tck-stream-artifact-file',
    (ctx) => {
      ctx.working();
      ctx.artifact(
        {
          name: 'file',
          parts: [
            {
              raw: Buffer.from('streamed file').toString('base64'),
              filename: 'output.txt',
              mediaType: 'text/plain',
            },
          ],
        },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
  ['tck-stream-ordering-001', workThenArtifact],
  ['tck-stream-001', workThenArtifact],
  ['tck-stream-002', (ctx) => ctx.complete()],
  ['tck-stream-003', workThenArtifact],
  [
    'test-resubscribe-message-id',
    async (ctx) => {
      ctx.working();
      await waitOrAbort(RESUBSCRIBE_HOLD_MS, ctx.signal);
      ctx.artifact(
        { name: 'result', parts: [{ text: 'Resubscribe scenario finished' }] },
        { lastChunk: true },
      );
      ctx.complete();
    },
  ],
];

/** The answer to a message with no known prefix, the words of the v1.0 kit's reference agent. */
export const unhandledText = (messageId: string) => `Unhandled messageId prefix: ${messageId}`;

const conformanceAgent: Agent = {
  async handle(ctx) {
    // Follow-ups are routed like new messages: the kit builds multi-turn history by sending
    // `tck-input-required` follow-ups and ends the task with a `tck-complete-task` one.
    const scenario = SCENARIOS.find(([prefix]) => ctx.message.messageId.startsWith(prefix));
    if (scenario) return scenario[1](ctx);
    // The 1.0 kit waits for a streamed unknown message to end; the 0.3 kit continues and
    // cancels such tasks, so they must stay open.
    if (ctx.version === '1.0') ctx.complete(unhandledText(ctx.message.messageId));
    else ctx.working();
  },
};

export default defineNode(() => ({
  name: 'conformance',
  description:
    'Conformance agent for the A2A TCK: the messageId prefix of each message, first or follow-up, selects a scenario (complete, artifacts, message reply, input-required, reject, streaming, resubscribe). Other messages complete with an echo over A2A 1.0 and stay working over 0.3.',
  capabilities: [
    capability({
      id: 'tck.scenarios',
      name: 'TCK scenarios',
      description: 'Lists the messageId prefixes this agent understands.',
      tags: ['conformance', 'testing'],
      keywords: ['scenario', 'tck'],
      readOnly: true,
      args: {},
      run: () => ({ prefixes: SCENARIOS.map(([p]) => p) }),
    }),
  ],
  agent: conformanceAgent,
  mcp: {
    info: { name: 'lume-a2a-conformance', title: 'MCP conformance fixture', version: '0.1.0' },
    tools: conformanceTools,
    resources: conformanceResources,
    prompts: conformancePrompts,
    completions: conformanceCompletions,
    tasks: true,
  },
  inputModes: ['text/plain', 'application/json', 'application/octet-stream'],
  outputModes: ['text/plain', 'application/json', 'application/octet-stream'],
}));
