/**
 * The peer client's one deadline timer (lib/peer/deadlines.ts): a call is aborted with a
 * TimeoutError once its time is up and never before, whatever other lengths are in flight.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { createDeadlines } from '../lib/peer/deadlines.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

test('a deadline aborts once its time is up, not a tick before, and done() drops it', () => {
  let t = 1_000;
  const d = createDeadlines(10, () => t);
  const a = d.start(100);
  const b = d.start(100);
  b.done();
  t = 1_099;
  d.sweep();
  expect([a.signal.aborted, d.size]).toEqual([false, 1]);
  t = 1_100;
  d.sweep();
  expect([a.signal.aborted, (a.signal.reason as DOMException).name]).toEqual([
    true,
    'TimeoutError',
  ]);
  expect(d.size).toBe(0);
  a.done(); // after the abort: nothing left to drop, nothing breaks
  b.done(); // twice: still counted once
  expect(d.size).toBe(0);
  // Calls that are all done before their tick leave nothing to abort.
  const c = d.start(100);
  const e = d.start(100);
  c.done();
  e.done();
  expect(d.size).toBe(0);
  t = 1_300;
  d.sweep();
  expect([c.signal.aborted, e.signal.aborted]).toEqual([false, false]);
});

test('a short deadline started after a long one still fires on time', () => {
  let t = 0;
  const d = createDeadlines(10, () => t);
  const long = d.start(10_000);
  const short = d.start(50);
  t = 60;
  d.sweep();
  expect([short.signal.aborted, long.signal.aborted, d.size]).toEqual([true, false, 1]);
  t = 10_000;
  d.sweep();
  expect([long.signal.aborted, d.size]).toEqual([true, 0]);
});

test('the timer runs by itself while a call waits', async () => {
  const d = createDeadlines(5);
  const call = d.start(1);
  await new Promise((resolve) => call.signal.addEventListener('abort', resolve));
  expect([call.signal.aborted, d.size]).toEqual([true, 0]);
});
