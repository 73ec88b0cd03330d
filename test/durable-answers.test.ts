/**
 * No answer reports a state that is not stored: a real node process (scanner, JSON-file tasks)
 * under concurrent SendMessage load, blocking and `returnImmediately` mixed, is killed with
 * SIGKILL the moment an answer arrives, several times over; after each restart every task any
 * answer acknowledged is read back, and none reads as less than what its answer said (a task
 * answered `completed` that reads back `failed` by the restart, or not at all, is the defect).
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_AUTH } from './support/node.ts';
import { type ServingProcess, startProcess } from './support/process.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const ROUNDS = 3;
/** Answers per round before the kill; the kill lands on the arrival of the last. */
const ACKS_PER_ROUND = 300;
const CLIENTS = 24;
/** How far a state has come: an answer's state may only be followed by one at least as far. */
const RANK: Record<string, number> = {
  TASK_STATE_SUBMITTED: 0,
  TASK_STATE_WORKING: 1,
  TASK_STATE_INPUT_REQUIRED: 2,
  TASK_STATE_AUTH_REQUIRED: 2,
  TASK_STATE_COMPLETED: 3,
  TASK_STATE_FAILED: 3,
  TASK_STATE_CANCELED: 3,
  TASK_STATE_REJECTED: 3,
};
const terminal = (s: string) => RANK[s] === 3;

let dataDir: string | undefined;
afterAll(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function call(url: string, method: string, params: unknown): Promise<any> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...TEST_AUTH },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}

interface Ack {
  id: string;
  state: string;
  immediate: boolean;
}

/** Sends until the process is killed; the kill comes with the ACKS_PER_ROUND-th answer. */
async function loadUntilKilled(
  node: ServingProcess,
  acks: Ack[],
): Promise<{ answered: number; cut: number }> {
  let answered = 0;
  let cut = 0;
  let killed = false;
  const client = async (n: number) => {
    for (let i = 0; !killed; i++) {
      const immediate = (n + i) % 2 === 0;
      let r: any;
      try {
        r = await call(node.url, 'SendMessage', {
          message: {
            messageId: crypto.randomUUID(),
            role: 'ROLE_USER',
            parts: [{ text: 'which sector moved today?' }],
          },
          configuration: { returnImmediately: immediate },
        });
      } catch {
        cut++; // the process is gone with this request in flight
        return;
      }
      const task = r.result?.task;
      if (!task) throw new Error(`unexpected answer ${JSON.stringify(r)}`);
      acks.push({ id: task.id, state: task.status.state, immediate });
      if (++answered === ACKS_PER_ROUND && !killed) {
        killed = true;
        node.proc.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  await node.proc.exited;
  return { answered, cut };
}

test('kill -9 under load: every acknowledged answer reads back as stored after the restart', async () => {
  const acks: Ack[] = [];
  let node = await startProcess('node/main.ts', ['--name', 'scanner']);
  dataDir = node.dataDir;
  const shared = { dataDir, fleetFile: join(dataDir, 'fleet.json') };
  const differ: { ack: Ack; read: string }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const before = acks.length;
    const load = await loadUntilKilled(node, acks);
    expect(load.answered).toBeGreaterThanOrEqual(ACKS_PER_ROUND);
    // The kill came under load: requests were in flight (each such client stops).
    expect(load.cut).toBeGreaterThan(0);
    node = await startProcess('node/main.ts', ['--name', 'scanner'], {}, shared);
    // This round's answers, read back from the restarted process, CLIENTS at a time.
    const round = acks.slice(before);
    for (let i = 0; i < round.length; i += CLIENTS)
      await Promise.all(
        round.slice(i, i + CLIENTS).map(async (ack) => {
          const got = await call(node.url, 'GetTask', { id: ack.id, historyLength: 0 });
          const read: string = got.result?.status?.state ?? `missing (${got.error?.code})`;
          const ok =
            read in RANK &&
            (terminal(ack.state) ? read === ack.state : RANK[read]! >= RANK[ack.state]!);
          if (!ok) differ.push({ ack, read });
        }),
      );
  }
  await node.stop();
  // Both kinds of answer were acknowledged.
  expect(acks.some((a) => !a.immediate)).toBe(true);
  expect(acks.some((a) => a.immediate)).toBe(true);
  expect(differ).toEqual([]);
}, 120_000);
