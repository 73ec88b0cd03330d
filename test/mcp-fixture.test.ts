/**
 * The conformance node's MCP fixture (node/conformance/) through lib/mcp, driven by the official
 * `@modelcontextprotocol/sdk` client as the conformance suite drives it: content of every kind,
 * logs and progress on the request's own stream, the server asking its client (sampling,
 * elicitation) with the client's answer coming back on a later POST, a client without the
 * capability told so instead of left waiting, binary and templated resources, subscriptions and
 * their bound, prompts and completions.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import conformance from '../node/conformance.ts';
import { startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

let node: TestNode;
const clients: Client[] = [];

beforeAll(async () => {
  node = await startNode(conformance());
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await node.dispose();
});

async function connect(capabilities: Record<string, object> = {}): Promise<Client> {
  const client = new Client({ name: 'lume-fixture-test', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`)));
  clients.push(client);
  return client;
}

const textOf = (r: unknown) => (r as { content: { type: string; text?: string }[] }).content;

describe('the conformance fixture over the official SDK client', () => {
  test('declares prompts, completions and subscriptions, and lists what the suite calls', async () => {
    const c = await connect();
    const caps = c.getServerCapabilities()!;
    expect(caps.prompts).toBeDefined();
    expect(caps.completions).toBeDefined();
    expect(caps.resources?.subscribe).toBe(true);
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('test_sampling');
    const schema = (await c.listTools()).tools.find((t) => t.name === 'json_schema_2020_12_tool')!;
    expect(schema.inputSchema.$defs).toBeDefined();
    expect(schema.inputSchema.additionalProperties).toBe(false);
  });

  test('image, audio and embedded resources come through as typed content', async () => {
    const c = await connect();
    const mixed = textOf(await c.callTool({ name: 'test_multiple_content_types' }));
    expect(mixed.map((b) => b.type)).toEqual(['text', 'image', 'resource']);
    const audio = textOf(await c.callTool({ name: 'test_audio_content' }));
    expect(audio[0]!.type).toBe('audio');
    const failed = await c.callTool({ name: 'test_error_handling' });
    expect(failed.isError).toBe(true);
  });

  test('logs and progress reach the client during the call, before its answer', async () => {
    const c = await connect();
    const logs: unknown[] = [];
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const progress: number[] = [];
    await c.callTool({ name: 'test_tool_with_logging' });
    expect(logs).toHaveLength(3);
    await c.callTool({ name: 'test_tool_with_progress' }, undefined, {
      onprogress: (p) => void progress.push(p.progress),
    });
    expect(progress).toEqual([0, 50, 100]);
    // A level above info silences the tool's info messages.
    await c.setLoggingLevel('error');
    await c.callTool({ name: 'test_tool_with_logging' });
    expect(logs).toHaveLength(3);
  });

  test('the server asks its client: sampling and elicitation answers come back into the tool', async () => {
    const c = await connect({ sampling: {}, elicitation: {} });
    let prompt = '';
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const content = req.params.messages[0]!.content as { text: string };
      prompt = content.text;
      return {
        role: 'assistant',
        content: { type: 'text', text: 'sampled' },
        model: 'test',
      };
    });
    c.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { response: 'yes' },
    }));
    const sampled = textOf(
      await c.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } }),
    );
    expect(prompt).toBe('hello');
    expect(sampled[0]!.text).toBe('LLM response: sampled');
    const elicited = textOf(
      await c.callTool({ name: 'test_elicitation', arguments: { message: 'ok?' } }),
    );
    expect(elicited[0]!.text).toContain('"response":"yes"');
  });

  test('a client without the capability gets a coded tool error at once, not a wait', async () => {
    const c = await connect();
    const r = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'x' } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ error: { code: 'MCP_CLIENT_CANNOT' } });
  });

  test('resources: text, binary, a template, subscriptions bounded', async () => {
    const c = await connect();
    const bin = (await c.readResource({ uri: 'test://static-binary' })).contents[0]!;
    expect('blob' in bin && bin.blob).toBeString();
    const t = (await c.readResource({ uri: 'test://template/42/data' })).contents[0]!;
    expect(JSON.parse('text' in t ? t.text : '')).toMatchObject({ id: '42' });
    const templates = await c.listResourceTemplates();
    expect(templates.resourceTemplates[0]!.uriTemplate).toBe('test://template/{id}/data');
    await expect(c.readResource({ uri: 'test://nothing' })).rejects.toThrow();
    for (let i = 0; i < 64; i++) await c.subscribeResource({ uri: `test://template/${i}/data` });
    await expect(c.subscribeResource({ uri: 'test://static-text' })).rejects.toThrow(/at most 64/);
    await c.unsubscribeResource({ uri: 'test://template/0/data' });
    await c.subscribeResource({ uri: 'test://static-text' });
  });

  test('prompts with arguments and resources, and completions', async () => {
    const c = await connect();
    expect((await c.listPrompts()).prompts).toHaveLength(5);
    const got = await c.getPrompt({
      name: 'test_prompt_with_arguments',
      arguments: { arg1: 'a', arg2: 'b' },
    });
    expect((got.messages[0]!.content as { text: string }).text).toContain("arg1='a'");
    await expect(c.getPrompt({ name: 'test_prompt_with_arguments' })).rejects.toThrow(/required/);
    await expect(c.getPrompt({ name: 'nope' })).rejects.toThrow(/Unknown prompt/);
    const done = await c.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'p' },
    });
    expect(done.completion.values).toEqual([]);
  });
});

/** A stateless (2026-07-28) tools/call to the fixture, with the headers that revision asks. */
async function statelessCall(
  name: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${node.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name,
        arguments: {},
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
        },
      },
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('the fixture over 2026-07-28 (raw requests)', () => {
  test('a round asks with a sealed requestState; the retry with it completes, an altered one is -32602', async () => {
    const tool = 'test_input_required_result_request_state';
    const first = await statelessCall(tool, {});
    expect(first.body.result.resultType).toBe('input_required');
    const state = first.body.result.requestState as string;
    const confirm = { confirm: { action: 'accept', content: { ok: true } } };
    const done = await statelessCall(tool, { requestState: state, inputResponses: confirm });
    expect(done.body.result.resultType).toBe('complete');
    expect(done.body.result.content[0].text).toContain('state-ok');
    const forged = `${state.slice(0, -2)}xx`;
    const refused = await statelessCall(tool, { requestState: forged, inputResponses: confirm });
    expect(refused.body.error.code).toBe(-32602);
  });

  test('a capability the client did not declare is -32021 (400); Mcp-Param disagreeing is -32020', async () => {
    const missing = await statelessCall('test_missing_capability', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe(-32021);
    expect(missing.body.error.data.requiredCapabilities).toEqual({ sampling: {} });
    const args = { arguments: { region: 'eu-west' } };
    const ok = await statelessCall('test_param_header', args, { 'mcp-param-region': 'eu-west' });
    expect(ok.body.result.content[0].text).toBe('Region: eu-west');
    const wrong = await statelessCall('test_param_header', args, { 'mcp-param-region': 'us' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe(-32020);
    const badB64 = await statelessCall('test_param_header', args, {
      'mcp-param-region': '=?base64?ZXUtd2Vzd!!?=',
    });
    expect(badB64.body.error.code).toBe(-32020);
  });
});
