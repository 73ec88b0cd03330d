/**
 * The scanner node: a text question picks a read-only tool by keyword (filling a sector named in
 * the text), a data part calls a capability, wrong arguments pause the task for input and a
 * continuation with good ones completes it.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, msgV1, rpc, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
beforeAll(async () => {
  node = await startNode(scanner({ fixturesDir: FIXTURES }));
});
afterAll(() => node.dispose());

const ask = async (parts: unknown[], taskId?: string) =>
  (
    await rpc(node.url, 'SendMessage', {
      message: { ...msgV1(''), parts, ...(taskId ? { taskId } : {}) },
    })
  ).result.task;

test('a text question picks a tool by keyword and fills the sector it names', async () => {
  const t = await ask([{ text: 'How did the semiconductors sector move today?' }]);
  expect(t.status.state).toBe('TASK_STATE_COMPLETED');
  expect(t.artifacts[0].name).toBe('sector.movement');
  expect(t.artifacts[0].parts[0].data.sectors).toEqual([
    {
      sector: 'semiconductors',
      name: 'Semiconductors',
      avgChangePct: 3.93,
      advancers: 4,
      decliners: 0,
      signaled: 3,
    },
  ]);
  const signals = await ask([{ text: 'any breakout signals in robotics?' }]);
  expect(signals.artifacts[0].parts[0].data.stocks.map((s: any) => s.code)).toEqual([
    '300124',
    '002747',
  ]);
});

test('a data part calls the capability; a wrong argument asks for input; continuing fixes it', async () => {
  const bad = await ask([{ data: { skill: 'stock.quote', args: { code: 688981 } } }]);
  expect(bad.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(bad.status.message.parts[0].text).toContain('argument code must be a string');
  const fixed = await ask([{ data: { skill: 'stock.quote', args: { code: '600519' } } }], bad.id);
  expect([fixed.id, fixed.status.state]).toEqual([bad.id, 'TASK_STATE_COMPLETED']);
  expect(fixed.artifacts[0].parts[1].text).toBe('Kweichow Moutai (600519) -0.9%');
});

test('an unknown skill is rejected; a text with no keyword asks which tool', async () => {
  const unknown = await ask([{ data: { skill: 'orders.place', args: {} } }]);
  expect(unknown.status.state).toBe('TASK_STATE_REJECTED');
  expect(unknown.status.message.parts[0].text).toContain('sector.movement');
  const vague = await ask([{ text: 'hello there' }]);
  expect(vague.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  const answered = await ask([{ text: 'scanner status please' }], vague.id);
  expect(answered.artifacts[0].parts[0].data).toEqual({
    asOf: '2026-11-27',
    market: 'A-share (sample data)',
    sectors: 8,
    stocks: 24,
  });
});
