/**
 * Agent frameworks' own A2A clients, unchanged, against a real node and the hub: Vercel's `ai`
 * with `a2a-ai-provider` (generateText, streamText) and Mastra's `A2AAgent` (generate, stream,
 * resumeGenerate). What a user of each sees: the answer text once (a completed task's result is
 * its artifact; its status repeats none of it), the right capability for a text that carries its
 * argument, an input-required question and the framework's way of answering it, and a failure's
 * reason.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { A2AAgent } from '@mastra/core/a2a';
import { a2a } from 'a2a-ai-provider';
import { generateText, streamText } from 'ai';
import { Catalog } from '../lib/catalog/catalog.ts';
import { fail } from '../lib/errors/result.ts';
import type { NodeDefinition } from '../lib/node/node-types.ts';
import scanner from '../node/scanner/index.ts';
import { startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

// The provider logs every event and card with console.log; the AI SDK warns about its v2 model.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const { log, debug } = console;
  console.log = () => {};
  console.debug = () => {};
  try {
    return await run();
  } finally {
    console.log = log;
    console.debug = debug;
  }
}

/** A node whose one capability fails with a code, for what a failure looks like. */
const failing: NodeDefinition = {
  name: 'gauge',
  description: 'A test node whose reading fails',
  catalog: new Catalog([
    {
      id: 'gauge.read',
      name: 'Gauge reading',
      description: 'A reading that fails',
      tags: ['test'],
      keywords: ['gauge'],
      readOnly: true,
      args: {},
      run: () => fail('GAUGE_OFFLINE', 'the gauge is offline'),
    },
  ]),
};

const SECTORS = 'Which sectors moved most today?';
const LEADER = '2026-11-27: Robotics & Automation leads at 7% (8 sectors)';
const QUOTE = 'SMIC (688981) 4.8%';
const QUESTION = 'Stock quote (stock.quote): I need the code: Six-digit stock code. Reply with it.';

let f: RunningFleet;
let scannerCard: string;
let hubCard: string;
let gaugeCard: string;
beforeAll(async () => {
  f = await startFleet([scanner({ fixturesDir: FIXTURES }), failing]);
  scannerCard = `${f.nodes.get('scanner')!.url}/.well-known/agent-card.json`;
  gaugeCard = `${f.nodes.get('gauge')!.url}/.well-known/agent-card.json`;
  hubCard = `${f.hubUrl}/.well-known/agent-card.json`;
});
afterAll(() => f.stop());

describe('ai + a2a-ai-provider', () => {
  const gen = (card: string, prompt: string) =>
    quietly(async () => (await generateText({ model: a2a(card), prompt })).text);
  const stream = (card: string, prompt: string) =>
    quietly(async () => streamText({ model: a2a(card), prompt }).text);

  test('generateText and streamText show the answer once', async () => {
    expect(await gen(scannerCard, SECTORS)).toBe(LEADER);
    expect(await stream(scannerCard, SECTORS)).toBe(LEADER);
  });

  test('a text with its argument runs the capability it names, on the node and through the hub', async () => {
    expect(await gen(scannerCard, 'stock quote 688981')).toBe(QUOTE);
    expect(await stream(scannerCard, 'stock quote 688981')).toBe(QUOTE);
    expect(await gen(hubCard, 'stock quote 688981')).toBe(`${QUOTE} [scanner/stock.quote]`);
  });

  test('generateText shows the question; the next prompt, the code alone, answers it', async () => {
    expect(await gen(scannerCard, 'stock quote')).toBe(QUESTION);
    // The provider sends only the last message, with no task id: the code picks its capability.
    const answered = await quietly(
      async () =>
        (
          await generateText({
            model: a2a(scannerCard),
            messages: [
              { role: 'user', content: 'stock quote' },
              { role: 'assistant', content: QUESTION },
              { role: 'user', content: '688981' },
            ],
          })
        ).text,
    );
    expect(answered).toBe(QUOTE);
    // streamText drops the status messages of a stream, so an input-required turn shows nothing.
    expect(await stream(scannerCard, 'stock quote')).toBe('');
  });

  test("a failed task shows its reason once (the status message's text)", async () => {
    // The code travels as data beside it (lib/errors/as-data.ts); the provider shows text parts.
    expect(await gen(gaugeCard, 'gauge')).toBe('the gauge is offline');
  });
});

describe("Mastra's A2AAgent", () => {
  const agent = (card: string) => new A2AAgent({ url: card, protocolVersion: '1.0' });

  test('generate and stream show the answer once', async () => {
    expect((await agent(scannerCard).generate(SECTORS)).text).toBe(LEADER);
    expect(await (await agent(scannerCard).stream(SECTORS)).text).toBe(LEADER);
  });

  test('a text with its argument runs the capability it names, on the node and through the hub', async () => {
    expect((await agent(scannerCard).generate('stock quote 688981')).text).toBe(QUOTE);
    expect(await (await agent(scannerCard).stream('stock quote 688981')).text).toBe(QUOTE);
    expect((await agent(hubCard).generate('stock quote 688981')).text).toBe(
      `${QUOTE} [scanner/stock.quote]`,
    );
  });

  test('input-required suspends the run with the question; resumeGenerate answers it', async () => {
    const a = agent(scannerCard);
    const asked = await a.generate('stock quote');
    expect([asked.finishReason, asked.text]).toEqual(['suspended', QUESTION]);
    const done = await a.resumeGenerate('688981', { runId: asked.runId });
    expect([done.finishReason, done.text]).toEqual(['stop', QUOTE]);

    const streamed = await a.stream('stock quote');
    expect(await streamed.text).toBe('');
    const payload = (await streamed.suspendPayload) as any;
    expect(payload.waitingForInput).toBe(true);
    expect(payload.task.status.message.parts[0].text).toBe(QUESTION);
    const resumed = await a.resumeGenerate('688981', { runId: streamed.runId });
    expect(resumed.text).toBe(QUOTE);

    // Through the hub: its Ask asks for the code, and the reply completes the same task.
    const hub = agent(hubCard);
    const viaHub = await hub.generate('stock quote');
    expect([viaHub.finishReason, viaHub.text]).toEqual([
      'suspended',
      'scanner/stock.quote: I need the code: Six-digit stock code. Reply with it.',
    ]);
    const hubDone = await hub.resumeGenerate('688981', { runId: viaHub.runId });
    expect(hubDone.text).toBe(`${QUOTE} [scanner/stock.quote]`);
  });

  test('a failed task shows its reason once', async () => {
    const r = await agent(gaugeCard)
      .generate('gauge')
      .then((x) => ({ text: x.text, finish: x.finishReason }))
      .catch((e) => ({ error: String((e as Error).message) }));
    // The reason once; Mastra itself reports the run as finished (`stop`), not as an error.
    expect(r).toEqual({ text: 'the gauge is offline', finish: 'stop' });
  });
});
