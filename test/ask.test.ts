/**
 * Ask Agent against the real fleet on port 0: a question answered from two nodes with the trace
 * records of each fact; a question nothing answers, said plainly; and the model planner through
 * an OpenAI-compatible endpoint (a fake one on port 0) with the card saying a model answers.
 */

import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readAgentBacked } from '../lib/a2a/card/card.ts';
import { memoryLog } from '../lib/log.ts';
import { openMeshDatabase } from '../lib/mesh/schema.ts';
import { createSqliteMeshStore } from '../lib/mesh/sqlite-store.ts';
import { loadPeerIdentity } from '../lib/peer/keys.ts';
import { createHub } from '../hub/hub.ts';
import { withOwnTools } from '../hub/workbench/ask-catalog.ts';
import { keywordPlanner, type CatalogTool } from '../hub/workbench/ask-planner.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { startModelServer } from './support/model-server.ts';
import { msgV1, rpc, testTokens } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs());
});
afterAll(() => f.stop());

const askHub = async (url: string, question: string) =>
  (await rpc(url, 'SendMessage', { message: msgV1(question) })).result.task;

describe('keyword planner', () => {
  test('a question answered from two nodes, each fact linked to its trace record', async () => {
    const t = await askHub(
      f.hubUrl,
      'How are the sectors moving today, and how many customers per industry are in follow-up?',
    );
    const answer = t.artifacts[0].parts[0].data;
    expect(answer.answered).toBe(true);
    expect(answer.facts.map((x: any) => `${x.node}/${x.tool}`).sort()).toEqual([
      'crm/crm.industries',
      'scanner/sector.movement',
    ]);
    const trace = (await (await fetch(`${f.hubUrl}/api/trace?limit=10`)).json()).records;
    for (const fact of answer.facts) {
      const rec = trace.find((r: any) => r.id === fact.traceId);
      expect([rec.to, rec.capability, rec.outcome]).toEqual([fact.node, fact.tool, 'ok']);
    }
    // The catalog itself came from the catalog node, also traced.
    expect(trace.some((r: any) => r.to === 'resolve' && r.capability === 'resolve.catalog')).toBe(
      true,
    );
    expect(t.artifacts[0].parts.find((p: any) => p.text).text).toContain(
      '[scanner/sector.movement]',
    );
    expect(t.status.message).toBeUndefined();
  });

  test('a question nothing can answer is said plainly', async () => {
    const t = await askHub(f.hubUrl, 'Qual é a receita de bolo de cenoura?');
    const answer = t.artifacts[0].parts[0].data;
    expect([answer.answered, answer.facts, answer.tried]).toEqual([false, [], []]);
    expect(answer.answer).toStartWith('No tool in the fleet matches this question.');
  });
});

describe("the hub's own capabilities", () => {
  /** Every tool a question is planned over: each node's descriptors as it serves them, and the hub's. */
  async function plannedTools(): Promise<CatalogTool[]> {
    const read = async (url: string) =>
      (await (await fetch(`${url}/capabilities`)).json()).capabilities;
    const nodes: CatalogTool[] = [];
    for (const n of f.fleet.nodes)
      if (f.nodes.has(n.name))
        for (const c of await read(n.url)) nodes.push({ ...c, node: n.name });
    return withOwnTools(nodes, { name: 'a2a', tools: await read(f.hubUrl) });
  }

  test('the planner routes "which industry should we contact today" to the hub\'s customer.reach first', async () => {
    const tools = await plannedTools();
    // The hub's relay of scanner's sector.movement is left to scanner; its own join is offered.
    expect(tools.filter((t) => t.node === 'a2a').map((t) => t.id)).toContain('customer.reach');
    expect(tools.some((t) => t.node === 'a2a' && t.id === 'sector.movement')).toBe(false);
    const plan = (await keywordPlanner('Which industry should we contact today?', tools)).calls;
    expect(`${plan[0]?.node}/${plan[0]?.tool}`).toBe('a2a/customer.reach');
    // A plain sector question still goes to scanner.
    const sectors = (await keywordPlanner('Which sectors moved today?', tools)).calls;
    expect(`${sectors[0]?.node}/${sectors[0]?.tool}`).toBe('scanner/sector.movement');
  });

  test('asked through the hub, the answer leads with the recommendation, its calls traced', async () => {
    const t = await askHub(f.hubUrl, 'Which industry should we contact today?');
    const answer = t.artifacts[0].parts[0].data;
    expect(answer.answered).toBe(true);
    expect(`${answer.facts[0].node}/${answer.facts[0].tool}`).toBe('a2a/customer.reach');
    expect(answer.facts[0].summary).toStartWith('Contact ');
    const trace = (await (await fetch(`${f.hubUrl}/api/trace?limit=20`)).json()).records;
    expect(trace.some((r: any) => r.to === 'crm' && r.capability === 'crm.industries')).toBe(true);
  });
});

describe('model planner', () => {
  test('a configured OpenAI-compatible model picks the tools; the card says a model answers only while it does; a failed model is reported', async () => {
    const model = startModelServer((body) => {
      const tool = body.tools!.find(
        (t) => t.function.description!.startsWith('lan:') && t.function.name.includes('lan_dns'),
      )!;
      return { calls: [{ name: tool.function.name, args: {} }] };
    });
    const log = memoryLog();
    const meshStore = createSqliteMeshStore({ db: openMeshDatabase(':memory:'), log });
    const hub = createHub({
      fleet: f.fleet,
      dataDir: f.dataDir,
      log,
      identity: await loadPeerIdentity(f.dataDir, 'a2a'),
      traceDb: new Database(':memory:'),
      meshStore,
      model: {
        baseUrl: model.baseUrl,
        model: 'test-model',
        apiKey: 'sk-test-secret',
        timeoutMs: 2000,
      },
      tokens: testTokens(),
    });
    const server = hub.listen(0);
    const agentBacked = async () =>
      readAgentBacked(await (await fetch(`${server.url}/.well-known/agent-card.json`)).json());
    try {
      expect(await hub.model!.check()).toBe(true);
      expect(await agentBacked()).toBe(true);
      const answer = (await askHub(server.url, 'anything at all')).artifacts[0].parts[0].data;
      expect([answer.plannedBy, answer.facts.map((x: any) => `${x.node}/${x.tool}`)]).toEqual([
        'model',
        ['lan/lan.dns'],
      ]);
      const asked = model.requests.find((r) => r.body.tools)!;
      expect([asked.auth, asked.body.model]).toEqual(['Bearer sk-test-secret', 'test-model']);
      // The model goes away: the keywords plan, the answer says so, and the card stops saying agent-backed.
      model.down();
      const fallback = (await askHub(server.url, 'which sectors moved most today')).artifacts[0]
        .parts[0].data;
      expect([fallback.plannedBy, fallback.planNote]).toEqual([
        'keywords',
        'the model did not plan (MODEL_HTTP: the model endpoint answered HTTP 503); keywords did',
      ]);
      expect(fallback.answered).toBe(true);
      expect(await agentBacked()).toBe(false);
      model.up();
      expect(await hub.model!.check()).toBe(true);
      expect(await agentBacked()).toBe(true);
      expect(log.lines.join('\n')).not.toContain('sk-test-secret');
    } finally {
      await server.stop();
      model.stop();
      await meshStore.close();
    }
  });
});
