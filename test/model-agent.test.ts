/**
 * Model-backed agents per node against an OpenAI-compatible model server on port 0 (real HTTP,
 * tool calls, failures, slow answers): lan plans over its own catalog with tool calling; scanner
 * is agent-backed only while the model answers its ping; crm stays a keyword agent with a model
 * configured. A failing or slow model hands the message to the keyword agent and the task says
 * so; the card flips as the model comes and goes; the key shows nowhere.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readAgentBacked } from '../lib/a2a/card/card.ts';
import { memoryLog } from '../lib/log.ts';
import { modelBackedNode } from '../lib/node/model-node.ts';
import type { ModelHealth } from '../lib/model/health.ts';
import { realNodeDefs } from './support/fleet.ts';
import {
  hasToolResults,
  lastUser,
  startModelServer,
  type ModelServer,
} from './support/model-server.ts';
import { msgV1, rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const KEY = 'sk-model-agent-SECRET-77';
let model: ModelServer;
const log = memoryLog();
const nodes: Record<string, { node: TestNode; health?: ModelHealth }> = {};

beforeAll(async () => {
  // The script: ask for lan's DNS tool first, then answer from the tool's result.
  model = startModelServer((b) => {
    const question = lastUser(b);
    if (question.includes('slow')) return { stallMs: 3000, then: { text: 'too late' } };
    if (!hasToolResults(b))
      return {
        calls: [
          {
            name: b.tools!.find((t) => t.function.name === 'lan_dns')
              ? 'lan_dns'
              : b.tools![0]!.function.name,
            args: {},
          },
        ],
      };
    const result = JSON.parse(b.messages.find((m) => m.role === 'tool')!.content!);
    return { text: `The resolver uses ${result.result.nameservers?.length ?? 0} nameserver(s).` };
  });
  const endpoint = { baseUrl: model.baseUrl, model: 'tiny', apiKey: KEY };
  for (const def of await realNodeDefs(['lan', 'scanner', 'crm'], { dataDir: undefined })) {
    const { definition, health } = modelBackedNode(def, {
      endpoint,
      pingMs: 60_000,
      log,
      timeoutMs: 500,
    });
    nodes[def.name] = { node: await startNode(definition), ...(health ? { health } : {}) };
  }
});
afterAll(async () => {
  for (const n of Object.values(nodes)) {
    n.health?.stop();
    await n.node.dispose();
  }
  model.stop();
});

const card = async (name: string) =>
  (await fetch(`${nodes[name]!.node.url}/.well-known/agent-card.json`)).json();
const ask = async (name: string, text: string) =>
  (await rpc(nodes[name]!.node.url, 'SendMessage', { message: msgV1(text) })).result.task;

describe('lan: model-backed', () => {
  test('plans over its own catalog with tool calling and answers in words; the card says agent-backed', async () => {
    expect(await nodes.lan!.health!.check()).toBe(true);
    expect(readAgentBacked(await card('lan'))).toBe(true);
    const before = model.requests.length;
    const t = await ask('lan', 'which nameservers does this network use?');
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(t.metadata.plannedBy).toBe('model');
    const answer = t.artifacts[0].parts.find((p: any) => p.data).data;
    expect(answer.calls).toEqual([{ tool: 'lan_dns', args: {}, ok: true }]);
    expect(t.artifacts[0].parts.find((p: any) => p.text).text).toMatch(
      /^The resolver uses \d+ nameserver\(s\)\.$/,
    );
    expect(t.status.message).toBeUndefined();
    // Two real model calls: the plan with lan's read-only tools, then the answer after the tool result.
    const asked = model.requests.slice(before);
    expect(asked.length).toBe(2);
    expect(asked[0]!.body.tools!.map((t) => t.function.name).sort()).toEqual([
      'lan_dns',
      'lan_hosts',
      'lan_status',
      'lan_traffic',
    ]);
    expect(asked[1]!.body.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
  });

  test('a failing model: the keyword agent answers, the task says why, and the card stops saying agent-backed; back when it returns', async () => {
    model.down();
    const t = await ask('lan', 'show me the dns servers');
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect([t.metadata.plannedBy, t.metadata.modelNote]).toEqual([
      'keywords',
      'MODEL_HTTP: the model endpoint answered HTTP 503',
    ]);
    expect(t.artifacts[0].name).toBe('lan.dns');
    expect(readAgentBacked(await card('lan'))).toBe(false);
    model.up();
    expect(await nodes.lan!.health!.check()).toBe(true);
    expect(readAgentBacked(await card('lan'))).toBe(true);
  });

  test('a slow model: past the time limit the keyword agent answers', async () => {
    const t = await ask('lan', 'slow: show me the dns servers');
    expect([t.metadata.plannedBy, t.metadata.modelNote]).toEqual([
      'keywords',
      'MODEL_TIMEOUT: the model did not answer within 500 ms',
    ]);
    expect(t.artifacts[0].name).toBe('lan.dns');
  });

  test('a data part calls the capability directly, without the model', async () => {
    const before = model.requests.length;
    const t = (
      await rpc(nodes.lan!.node.url, 'SendMessage', {
        message: { ...msgV1(''), parts: [{ data: { skill: 'lan.dns', args: {} } }] },
      })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(model.requests.length).toBe(before);
  });
});

describe('scanner: dynamic', () => {
  test('agent-backed only after a ping answers; while pings fail it answers by keywords without asking the model', async () => {
    // Not pinged yet: not agent-backed, and the keyword agent answers.
    expect(readAgentBacked(await card('scanner'))).toBe(false);
    const quiet = model.requests.length;
    const first = await ask('scanner', 'which sector moved most');
    expect([first.metadata.plannedBy, first.metadata.modelNote]).toEqual([
      'keywords',
      'the model did not answer its last ping',
    ]);
    expect(model.requests.length).toBe(quiet);
    expect(await nodes.scanner!.health!.check()).toBe(true);
    expect(readAgentBacked(await card('scanner'))).toBe(true);
    expect((await ask('scanner', 'which sector moved most')).metadata.plannedBy).toBe('model');
    model.down();
    expect(await nodes.scanner!.health!.check()).toBe(false);
    expect(readAgentBacked(await card('scanner'))).toBe(false);
    model.up();
  });

  test('the periodic ping flips the card by itself', async () => {
    const { definition, health } = modelBackedNode(
      (await realNodeDefs(['scanner'], { dataDir: undefined }))[0]!,
      { endpoint: { baseUrl: model.baseUrl, model: 'tiny' }, pingMs: 20, log },
    );
    const n = await startNode(definition);
    const until = async (want: boolean) => {
      const deadline = performance.now() + 10_000;
      while (performance.now() < deadline)
        if (
          readAgentBacked(await (await fetch(`${n.url}/.well-known/agent-card.json`)).json()) ===
          want
        )
          return want;
      return !want;
    };
    try {
      health!.start();
      expect(await until(true)).toBe(true);
      model.down();
      expect(await until(false)).toBe(false);
      model.up();
      expect(await until(true)).toBe(true);
    } finally {
      health!.stop();
      model.up();
      await n.dispose();
    }
  });
});

describe('crm: keyword', () => {
  test('stays a keyword agent with a model configured: no health, no model call, card false', async () => {
    expect(nodes.crm!.health).toBeUndefined();
    expect(readAgentBacked(await card('crm'))).toBe(false);
    const before = model.requests.length;
    const t = await ask('crm', 'how many customers per industry');
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(t.metadata?.plannedBy).toBeUndefined();
    expect(model.requests.length).toBe(before);
  });

  test('models.crm.agent can make it model-backed', async () => {
    const def = (await realNodeDefs(['crm'], { dataDir: undefined }))[0]!;
    const { health } = modelBackedNode(def, {
      endpoint: { baseUrl: model.baseUrl, model: 'tiny' },
      agent: 'model',
      pingMs: 60_000,
      log,
    });
    expect(health).toBeDefined();
    // Without an endpoint no mode makes a node model-backed.
    expect(modelBackedNode(def, { agent: 'model', pingMs: 60_000, log }).health).toBeUndefined();
  });
});

test('the key went only into the Authorization header: not on a card, in a task or in the log', async () => {
  expect(model.requests.every((r) => r.auth === `Bearer ${KEY}` || r.auth === null)).toBe(true);
  for (const name of ['lan', 'scanner', 'crm'])
    expect(JSON.stringify(await card(name))).not.toContain(KEY);
  const tasks = await rpc(nodes.lan!.node.url, 'ListTasks', {
    pageSize: 100,
    includeArtifacts: true,
  });
  expect(JSON.stringify(tasks)).not.toContain(KEY);
  expect(log.lines.join('\n')).not.toContain(KEY);
});
