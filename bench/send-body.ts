/**
 * @module bench/send-body — what the A2A benchmarks send and how they find their servers: the
 * JSON-RPC `SendMessage` body (a text question, or scanner's `sector.movement` as a data part),
 * written to a file for the load tool, and the port a bench server prints (`LISTENING <port>`).
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The message parts a benchmark sends: the echo's text, or scanner's data-part call. */
export const TEXT_PARTS = [{ text: 'hello', mediaType: 'text/plain' }];
export const SECTOR_PARTS = [
  { data: { skill: 'sector.movement', args: {} }, mediaType: 'application/json' },
];

/** Writes a blocking JSON-RPC `SendMessage` with `parts` to `dir/name`; returns its path. */
export function writeSendBody(dir: string, name: string, parts: unknown[] = TEXT_PARTS): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'bench-1', role: 'ROLE_USER', parts } },
    }),
  );
  return file;
}

/** The port a bench server prints on its stdout (`LISTENING <port>`); fails if it exits first. */
export async function listeningPort(
  stdout: ReadableStream<Uint8Array>,
  what: string,
): Promise<number> {
  const reader = stdout.getReader();
  let seen = '';
  while (true) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${what} exited before listening`);
    seen += new TextDecoder().decode(value);
    const m = /LISTENING (\d+)/.exec(seen);
    if (m) {
      reader.releaseLock();
      return Number(m[1]);
    }
  }
}

/** What bench/load.ts prints last: one JSON line of the run's figures. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

/** Runs bench/load.ts against a node's `/a2a` for `secs` with `connections` in flight. */
export async function runLoad(
  root: string,
  o: { port: number; connections: number; secs: number; body: string },
): Promise<LoadFigures> {
  const proc = Bun.spawn(
    [
      'bun',
      'bench/load.ts',
      `http://127.0.0.1:${o.port}/a2a`,
      String(o.connections),
      String(o.secs),
      o.body,
      'A2A-Version:1.0',
    ],
    { cwd: root, stdout: 'pipe', stderr: 'inherit' },
  );
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split('\n').at(-1)!) as LoadFigures;
}
