/**
 * Test support: SSE clients on a raw socket, which read or stall the way a stuck client does,
 * and the resident memory of a child process read from /proc.
 */

import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Resident memory of a process now, in bytes (VmRSS). */
export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
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
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n${extra}\r\n`,
    );
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
