/**
 * Test support: the hub or a node as a real child process on a free port, its resident memory
 * read from /proc, and SSE clients that read or stall on a raw socket.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join, resolve } from 'node:path';
import { tempDir } from './node.ts';

const root = resolve(import.meta.dir, '../..');

export interface Child {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  url: string;
  dataDir: string;
  /** Resident memory of the process now, in bytes (VmRSS). */
  rss(): number;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
}

/** A fleet file naming one hub on port 0 and `nodes` (a node on port 1 is never reachable). */
export function writeFleet(dir: string, nodes: { name: string; port: number; file: string }[] = []): string {
  const file = join(dir, 'fleet.json');
  writeFileSync(file, JSON.stringify({
    hub: { name: 'a2a', port: 0, role: 'hub', file: 'hub/main.ts' },
    nodes: nodes.map((n) => ({ ...n, role: `${n.name} node` })),
  }));
  return file;
}

/** Starts `bun <args>` from the project root and resolves once it prints `listening on <url>`. */
export async function spawnListening(args: string[], env: Record<string, string>, dataDir = tempDir('lume-a2a-proc-')): Promise<Child> {
  const proc = Bun.spawn(['bun', ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let err = '';
  void (async () => {
    const dec = new TextDecoder();
    const r = proc.stderr.getReader();
    for (let c = await r.read(); !c.done; c = await r.read()) err += dec.decode(c.value);
  })();
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let out = '';
  let m: RegExpExecArray | null = null;
  while (!(m = /listening on (http:\/\/\S+)/.exec(out))) {
    const r = await reader.read();
    if (r.done) throw new Error(`process ended before listening: ${out}\n${err}`);
    out += dec.decode(r.value);
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    for (let c = await reader.read(); !c.done; c = await reader.read());
  })();
  return {
    proc,
    url: m[1]!,
    dataDir,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024,
    stderr: () => err,
  };
}

export interface RawSse {
  /** Resolves once the response headers and the opening comment arrived. */
  opened: Promise<void>;
  /** Stops reading from the socket (the kernel buffers fill, then the server's queue). */
  stall(): void;
  /** Reads on until the response ends (its last chunk, or the connection closes); resolves with the body. */
  drain(): Promise<string>;
  /** The body received so far (chunked encoding removed). */
  text(): string;
  close(): void;
}

/** A GET of an SSE path over a raw socket, so a test can stop reading the way a stuck client does. */
export function rawSse(url: string, path: string, headers: Record<string, string> = {}): RawSse {
  const { hostname, port } = new URL(url);
  // Chunks are kept apart and joined once: appending to one long string and testing its end on
  // every chunk flattens it each time.
  const chunks: Buffer[] = [];
  let tail = '';
  let isOpen = false;
  let opened!: () => void;
  let ended!: () => void;
  const openedP = new Promise<void>((r) => (opened = r));
  const endedP = new Promise<void>((r) => (ended = r));
  const socket = net.connect(Number(port), hostname, () => {
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n${extra}\r\n`);
  });
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    tail = (tail + chunk.toString('latin1')).slice(-64);
    if (!isOpen && Buffer.concat(chunks).includes(': stream open')) (isOpen = true), opened();
    // The last chunk of a chunked body ends the response.
    if (tail.endsWith('\r\n0\r\n\r\n')) ended();
  });
  socket.on('close', () => ended());
  socket.on('error', () => ended());
  return {
    opened: openedP,
    stall: () => socket.pause(),
    drain: async () => {
      socket.resume();
      await endedP;
      return dechunk(Buffer.concat(chunks)).body;
    },
    text: () => dechunk(Buffer.concat(chunks)).body,
    close: () => socket.destroy(),
  };
}

/** The body of a raw HTTP/1.1 response with chunked encoding, and whether its last chunk arrived. */
function dechunk(raw: Buffer): { body: string; done: boolean } {
  const start = raw.indexOf('\r\n\r\n');
  if (start < 0) return { body: '', done: false };
  const parts: Buffer[] = [];
  let at = start + 4;
  let done = false;
  while (true) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isInteger(size)) throw new Error(`not a chunk size at byte ${at}`);
    if (size === 0) {
      done = true;
      break;
    }
    parts.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + size)));
    if (raw.length < eol + 2 + size) break;
    at = eol + 2 + size + 2;
  }
  return { body: Buffer.concat(parts).toString('utf8'), done };
}
