/**
 * Text that carries arguments: a capability's arguments read out of a text by its own specs
 * (lib/catalog/text-args.ts), in process; then over A2A against the real fleet and the hub: every
 * example on every card, sent as text, completes with the capability it names; a text that lacks
 * a required argument asks for exactly that argument and a text reply fills it; ambiguous texts
 * (two codes, a text full of numbers, a token that fits two arguments, 1 MB) are asked about and
 * call nothing; the hub's Ask routes such a text to the node and capability it names.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Catalog, type ArgSpec } from '../lib/catalog/catalog.ts';
import {
  argsFromText,
  MAX_PATTERN_CHARS,
  MAX_TEXT_CHARS,
  MAX_WORD_CHARS,
  patternWords,
} from '../lib/catalog/text-args.ts';
import scanner from '../node/scanner/index.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { FIXTURES, msgV1, rpc } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const code: ArgSpec = { type: 'string', description: 'Six-digit stock code', pattern: '\\d{6}' };
const sector: ArgSpec = {
  type: 'string',
  description: 'Sector id',
  enum: ['banking', 'new-energy'],
  synonyms: { 'new-energy': ['EV makers'] },
};

describe('argsFromText, in process', () => {
  test('enum values, their synonyms and a pattern fill their arguments', () => {
    expect(argsFromText('quote 688981 please', { code: { ...code, required: true } })).toEqual({
      ok: true,
      args: { code: '688981' },
    });
    expect(argsFromText('how are EV makers doing', { sector })).toEqual({
      ok: true,
      args: { sector: 'new-energy' },
    });
    expect(argsFromText('how is new energy doing', { sector })).toEqual({
      ok: true,
      args: { sector: 'new-energy' },
    });
    // Inside a longer identifier a pattern does not match (the six digits of a USCC are no code).
    expect(argsFromText('credit code 91440300482543082Q', { code })).toEqual({
      ok: true,
      args: {},
    });
    const known: ArgSpec = {
      type: 'string',
      description: 'login',
      known: () => ['mia', 'mia-zhao'],
    };
    expect(argsFromText('profile of mia-zhao', { login: known })).toEqual({
      ok: true,
      args: { login: 'mia-zhao' },
    });
  });

  test('a missing required argument is asked for by name and description', () => {
    expect(argsFromText('stock quote', { code: { ...code, required: true } })).toEqual({
      ok: false,
      kind: 'missing',
      arg: 'code',
      question: 'I need the code: Six-digit stock code. Reply with it.',
    });
  });

  test('ambiguity is a question: two codes, numbers everywhere, one token fitting two arguments', () => {
    const two = argsFromText('688981 or 600519?', { code: { ...code, required: true } });
    expect(two).toMatchObject({ ok: false, kind: 'ambiguous', arg: 'code' });
    const digits = Array.from({ length: 200 }, (_, i) => String(100000 + i * 7)).join(' ');
    expect(argsFromText(digits, { code })).toMatchObject({ ok: false, kind: 'ambiguous' });
    const count: ArgSpec = { type: 'integer', description: 'How many' };
    expect(argsFromText('top 5', { count })).toEqual({ ok: true, args: { count: 5 } });
    expect(argsFromText('top 5 of 10', { count })).toMatchObject({ ok: false, kind: 'ambiguous' });
    // The stock code is taken first; the one number left is the count.
    expect(argsFromText('688981 top 3', { count, code })).toEqual({
      ok: true,
      args: { code: '688981', count: 3 },
    });
    const both = argsFromText('688981', { code, other: { ...code, description: 'Another code' } });
    expect(both).toEqual({
      ok: false,
      kind: 'ambiguous',
      arg: 'other',
      question: 'Is 688981 the code or the other? Reply with the other alone, or send a data part.',
    });
  });

  // resolve's dotted id went back over the whole rest of the text from every `a` of `-a-a-a…`:
  // quadratic, 53 ms a text. A pattern now sees words of at most MAX_WORD_CHARS, each character in
  // one word at most, so its work is at most MAX_WORD_CHARS steps per character of the text.
  test('a declared pattern scans words of bounded length: its work is linear in the text', () => {
    const dotted: ArgSpec = {
      type: 'string',
      description: 'Capability id',
      pattern: '[a-z][a-z0-9-]*(?:\\.[a-z][a-z0-9-]*)+',
      required: true,
    };
    const work = (text: string) => {
      const words = patternWords(text);
      expect(words.every((w) => w.length <= MAX_WORD_CHARS)).toBe(true);
      return words.reduce((n, w) => n + w.length * MAX_WORD_CHARS, 0);
    };
    for (const n of [512, 1024, 2048, MAX_TEXT_CHARS]) {
      const glued = '-a'.repeat(n / 2);
      const spaced = `${'-a'.repeat(31)}- `.repeat(Math.floor(n / 64));
      for (const hostile of [glued, spaced]) {
        expect(work(hostile)).toBeLessThanOrEqual(hostile.length * MAX_WORD_CHARS);
        expect(argsFromText(hostile, { id: dotted })).toMatchObject({ ok: false, kind: 'missing' });
      }
      // One run of 4 096 characters holds no identifier: nothing of it is scanned.
      expect(work(glued)).toBe(0);
    }
    expect(argsFromText(`describe ${'-a'.repeat(40)} and stock.quote`, { id: dotted })).toEqual({
      ok: true,
      args: { id: 'stock.quote' },
    });
  });

  test('a catalog refuses a pattern it cannot bound: too long, invalid, or spanning whitespace', () => {
    const withPattern = (pattern: string) => () =>
      new Catalog([
        {
          id: 'demo.read',
          name: 'Read',
          description: 'Reads',
          tags: ['demo'],
          keywords: [],
          readOnly: true,
          args: { x: { type: 'string', description: 'x', pattern } },
          run: () => ({}),
        },
      ]);
    expect(withPattern('\\d{6}')).not.toThrow();
    expect(withPattern('a'.repeat(MAX_PATTERN_CHARS + 1))).toThrow(/at most 200 characters/);
    expect(withPattern('(')).toThrow(/not a regular expression/);
    expect(withPattern('\\d{3} \\d{3}')).toThrow(/inside one word/);
    expect(withPattern('\\d{3}\\s\\d{3}')).toThrow(/inside one word/);
  });
});

let f: RunningFleet;
beforeAll(async () => {
  f = await startFleet(await realNodeDefs());
});
afterAll(() => f.stop());

const send = async (url: string, text: string, extra: Record<string, unknown> = {}) =>
  (await rpc(url, 'SendMessage', { message: msgV1(text, extra) })).result.task;
const textOf = (t: any) =>
  (t.status.message?.parts ?? [])
    .map((p: any) => p.text)
    .filter(Boolean)
    .join(' ');
/** The capability a completed task ran: a node's artifact is named after it; Ask's lists its facts. */
const ranBy = (t: any): string[] =>
  t.artifacts[0]?.name === 'answer'
    ? (t.artifacts[0].parts.find((p: any) => p.data)?.data.facts ?? []).map((x: any) => x.tool)
    : t.artifacts.map((a: any) => a.name);

describe('every example on every card, sent as text', () => {
  test('completes with the capability it names', async () => {
    const members = [...f.nodes.entries()].map(([name, n]) => ({ name, url: n.url }));
    const outcomes: { who: string; skill: string; example: string; ran: string[] }[] = [];
    let examples = 0;
    for (const m of [...members, { name: 'a2a', url: f.hubUrl }]) {
      const res = await fetch(`${m.url}/.well-known/agent-card.json`);
      if (res.status === 404) continue; // a peer-only node has no card
      const card = await res.json();
      for (const skill of card.skills)
        for (const example of skill.examples ?? []) {
          examples++;
          const t = await send(m.url, example);
          const ran =
            t.status.state === 'TASK_STATE_COMPLETED' ? ranBy(t) : [t.status.state, textOf(t)];
          outcomes.push({
            who: m.name,
            skill: skill.id,
            example,
            ran: ran.includes(skill.id) ? [skill.id] : ran,
          });
        }
    }
    expect(outcomes).toEqual(outcomes.map((o) => ({ ...o, ran: [o.skill] })));
    expect(examples).toBeGreaterThanOrEqual(20);
  });
});

describe('a text that names a capability but lacks an argument', () => {
  test('asks for exactly that argument in words, and a text reply fills it', async () => {
    const url = f.nodes.get('scanner')!.url;
    const asked = await send(url, 'stock quote');
    expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(asked)).toBe(
      'Stock quote (stock.quote): I need the code: Six-digit stock code. Reply with it.',
    );
    expect(asked.artifacts ?? []).toEqual([]);
    const done = await send(url, '688981', { taskId: asked.id, contextId: asked.contextId });
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.status.message).toBeUndefined();
    expect(done.artifacts.map((a: any) => [a.name, a.parts[1].text])).toEqual([
      ['stock.quote', 'SMIC (688981) 4.8%'],
    ]);
  });

  test('a free-words argument takes the reply as it is', async () => {
    const url = f.nodes.get('resolve')!.url;
    const asked = await send(url, 'search');
    expect(textOf(asked)).toBe(
      'Search capabilities (resolve.search): I need the query: Words to look for. Reply with it.',
    );
    const done = await send(url, 'deploy', { taskId: asked.id, contextId: asked.contextId });
    expect([done.status.state, done.artifacts[0].name]).toEqual([
      'TASK_STATE_COMPLETED',
      'resolve.search',
    ]);
    expect(done.artifacts[0].parts[0].data.total).toBeGreaterThan(0);
  });

  test('an identifier alone picks the one capability it fits', async () => {
    const t = await send(f.nodes.get('crm')!.url, '91440300482543082Q');
    expect([t.status.state, t.artifacts[0].name]).toEqual(['TASK_STATE_COMPLETED', 'crm.company']);
  });
});

describe('ambiguous or hostile texts are asked about, and call nothing', () => {
  const traced = async (): Promise<any[]> =>
    ((await (await fetch(`${f.hubUrl}/api/trace?limit=200`)).json()) as any).records;

  test('two codes, a text full of numbers, 1 MB: input-required with a question, no artifact', async () => {
    const url = f.nodes.get('scanner')!.url;
    const two = await send(url, 'stock quote 688981 or 600519');
    expect([two.status.state, textOf(two)]).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      'Stock quote (stock.quote): Which code do you mean: 688981, 600519? Reply with one.',
    ]);
    const numbers = Array.from({ length: 400 }, (_, i) => 100000 + i * 37).join(' ');
    const full = await send(url, `stock quote ${numbers.slice(0, 3000)}`);
    expect(full.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(full)).toStartWith('Stock quote (stock.quote): Which code do you mean:');
    const huge = await send(url, `stock quote 688981 ${'x'.repeat(1024 * 1024)}`);
    expect([huge.status.state, textOf(huge)]).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      `That message is ${1024 * 1024 + 19} characters; ask in at most ${MAX_TEXT_CHARS}, or send a data part {"skill": "<capability id>", "args": {…}}.`,
    ]);
    for (const t of [two, full, huge]) expect(t.artifacts ?? []).toEqual([]);
  });

  test('a 4 096-character `-a-a-a…` text is asked about by resolve and the hub, which keep serving', async () => {
    const hostile = `which node offers ${'-a'.repeat((MAX_TEXT_CHARS - 18) / 2)}`;
    expect(hostile.length).toBe(MAX_TEXT_CHARS);
    for (const url of [f.nodes.get('resolve')!.url, f.hubUrl]) {
      const t = await send(url, hostile);
      expect([t.status.state, t.artifacts ?? []]).toEqual(['TASK_STATE_INPUT_REQUIRED', []]);
    }
    const ok = await send(f.nodes.get('resolve')!.url, 'which node offers crm.industry?');
    expect([ok.status.state, ok.artifacts[0].name]).toEqual([
      'TASK_STATE_COMPLETED',
      'resolve.capability',
    ]);
  });

  test("the hub's Ask asks instead of calling a capability with a guessed argument", async () => {
    const before = Math.max(0, ...(await traced()).map((r) => r.id));
    const t = await send(f.hubUrl, 'stock quote 688981 or 600519');
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(t)).toBe(
      'scanner/stock.quote: Which code do you mean: 688981, 600519? Reply with one.',
    );
    // Only the catalog was read; no node was called with a guess.
    const since = (await traced()).filter((r) => r.id > before).map((r) => r.capability);
    expect(since).toEqual(['resolve.catalog']);
  });
});

describe("the hub's Ask routes a text with arguments to the right node and capability", () => {
  test('stock quote 688981 is scanner/stock.quote with that code', async () => {
    const t = await send(f.hubUrl, 'stock quote 688981');
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    const answer = t.artifacts[0].parts.find((p: any) => p.data).data;
    expect(answer.facts[0]).toMatchObject({
      node: 'scanner',
      tool: 'stock.quote',
      summary: 'SMIC (688981) 4.8%',
    });
    const trace = ((await (await fetch(`${f.hubUrl}/api/trace?to=scanner&limit=1`)).json()) as any)
      .records[0];
    expect([trace.capability, trace.id]).toEqual(['stock.quote', answer.facts[0].traceId]);
  });

  test('without the code it asks, and the reply completes it', async () => {
    const asked = await send(f.hubUrl, 'stock quote');
    expect([asked.status.state, textOf(asked)]).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      'scanner/stock.quote: I need the code: Six-digit stock code. Reply with it.',
    ]);
    const done = await send(f.hubUrl, '688981', { taskId: asked.id, contextId: asked.contextId });
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(ranBy(done)[0]).toBe('stock.quote');
  });
});

test('the scanner card names sectors as its data does (synonyms come from the snapshot)', () => {
  const def = scanner({ fixturesDir: FIXTURES });
  const pick = def.catalog.readText('How is Robotics & Automation doing today?');
  expect(pick).toMatchObject({
    kind: 'call',
    cap: { id: 'sector.movement' },
    args: { sector: 'robotics' },
  });
});
