/**
 * @module test/support/kill-under-load — the durable-answers check, shared by its test and its
 * bench: a real scanner process under concurrent SendMessage load (blocking and
 * `returnImmediately` mixed) is killed with SIGKILL the moment its N-th answer arrives, restarted
 * on the same data folder, and every task an answer acknowledged is read back; an answer
 * "differs" when its task is gone, a terminal answer reads back otherwise, or a state reads back
 * as less far than the answer said.
 */

import { join } from 'node:path';
import { TEST_AUTH } from './node.ts';
import { type ServingProcess, startProcess } from './process.ts';

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

export interface Ack {
  id: string;
  state: string;
  immediate: boolean;
}

export interface KillReport {
  acks: Ack[];
  /** Requests in flight at each kill (their clients stopped there), per round. */
  cut: number[];
  differ: { ack: Ack; read: string }[];
  /** Acknowledged non-final tasks the restart failed (TASK_INTERRUPTED), as documented. */
  interrupted: number;
  /** The data folder (the caller removes it). */
  dataDir: string;
}

async function call(url: string, method: string, params: unknown): Promise<any> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...TEST_AUTH },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}

/** Sends until the process is killed; the kill comes with the `acksPerRound`-th answer. */
async function loadUntilKilled(
  node: ServingProcess,
  acks: Ack[],
  acksPerRound: number,
  clients: number,
): Promise<number> {
  let answered = 0;
  let cut = 0;
  let killed = false;
  const send = (immediate: boolean) => ({
    immediate,
    answer: call(node.url, 'SendMessage', {
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'which sector moved today?' }],
      },
      configuration: { returnImmediately: immediate },
    }),
  });
  const client = async (n: number) => {
    let pending = send(n % 2 === 0);
    for (let i = 1; ; i++) {
      let r: any;
      try {
        r = await pending.answer;
      } catch {
        cut++; // the process is gone with this request in flight
        return;
      }
      const task = r.result?.task;
      if (!task) throw new Error(`unexpected answer ${JSON.stringify(r)}`);
      acks.push({ id: task.id, state: task.status.state, immediate: pending.immediate });
      if (killed) return;
      // The next request leaves before the kill, so at least one is in flight when it lands (on
      // a busy machine every other client may already hold its answer).
      pending = send((n + i) % 2 === 0);
      if (++answered === acksPerRound) {
        killed = true;
        node.proc.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
  await node.proc.exited;
  return cut;
}

/** Runs `rounds` of load, kill -9 and restart, comparing each round's answers after its restart. */
export async function killUnderLoad(opts: {
  rounds: number;
  acksPerRound: number;
  clients: number;
  /** More of the node's environment. */
  env?: Record<string, string>;
}): Promise<KillReport> {
  const acks: Ack[] = [];
  const env = opts.env ?? {};
  let node = await startProcess('node/main.ts', ['--name', 'scanner'], env);
  const dataDir = node.dataDir;
  const shared = { dataDir, fleetFile: join(dataDir, 'fleet.json') };
  const report: KillReport = { acks, cut: [], differ: [], interrupted: 0, dataDir };
  try {
    for (let r = 0; r < opts.rounds; r++) {
      const before = acks.length;
      report.cut.push(await loadUntilKilled(node, acks, opts.acksPerRound, opts.clients));
      node = await startProcess('node/main.ts', ['--name', 'scanner'], env, shared);
      const round = acks.slice(before);
      for (let i = 0; i < round.length; i += opts.clients)
        await Promise.all(
          round.slice(i, i + opts.clients).map(async (ack) => {
            const got = await call(node.url, 'GetTask', { id: ack.id, historyLength: 0 });
            const read: string = got.result?.status?.state ?? `missing (${got.error?.code})`;
            if (!terminal(ack.state) && read === 'TASK_STATE_FAILED') report.interrupted++;
            const ok =
              read in RANK &&
              (terminal(ack.state) ? read === ack.state : RANK[read]! >= RANK[ack.state]!);
            if (!ok) report.differ.push({ ack, read });
          }),
        );
    }
  } finally {
    await node.stop();
  }
  return report;
}
