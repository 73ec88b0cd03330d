/**
 * Test support: a WebSocket client on a raw TCP socket (RFC 6455 by hand: the upgrade, masked
 * client text frames, unmasked server frames), so a test can stop reading the way a stuck client
 * does, which a WebSocket API cannot.
 */

import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface CloseFrame {
  code: number;
  reason: string;
}

export interface RawWebSocket {
  /** Resolves once the server answered the upgrade with 101 and a matching `Sec-WebSocket-Accept`. */
  opened: Promise<void>;
  /** Sends one masked text frame. */
  send(text: string): void;
  /** The next text frame (JSON-parsed) the socket has read; waits for it. */
  next(): Promise<any>;
  /** Stops reading from the socket (the kernel buffers fill, then the server's send buffer). */
  stall(): void;
  /**
   * Reads on until the server's close frame or the end of the connection; resolves with every
   * text frame not yet taken by `next()` and the close frame (null when the connection ended
   * without one).
   */
  drain(): Promise<{ frames: any[]; close: CloseFrame | null }>;
  destroy(): void;
}

/** One client frame: FIN, the opcode, the mask bit with the payload length, a fresh mask key, the masked payload. */
export function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head =
    len < 126
      ? Buffer.from([0x80 | opcode, 0x80 | len])
      : len < 65_536
        ? Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff])
        : Buffer.concat([
            Buffer.from([0x80 | opcode, 0x80 | 127]),
            (() => {
              const b = Buffer.alloc(8);
              b.writeBigUInt64BE(BigInt(len));
              return b;
            })(),
          ]);
  const mask = randomBytes(4);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

/** Opens `path` on the server at `url` as a WebSocket over a plain TCP socket. */
export function rawWebSocket(url: string, path: string): RawWebSocket {
  const { hostname, port } = new URL(url);
  const key = randomBytes(16).toString('base64');
  const expectedAccept = createHash('sha1')
    .update(key + ACCEPT_GUID)
    .digest('base64');
  let buf: Buffer = Buffer.alloc(0);
  let upgraded = false;
  let message: Buffer[] = [];
  const texts: any[] = [];
  const waiters: ((f: any) => void)[] = [];
  let close: CloseFrame | null = null;
  let ended = false;
  let onEnd: (() => void) | undefined;
  let opened!: () => void;
  let failed!: (e: Error) => void;
  const openedP = new Promise<void>((ok, fail) => ((opened = ok), (failed = fail)));

  const socket = net.connect(Number(port), hostname, () => {
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
  const finish = () => {
    if (ended) return;
    ended = true;
    failed(new Error('the connection ended before the upgrade'));
    onEnd?.();
  };
  socket.on('close', finish);
  socket.on('error', finish);
  socket.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    if (!upgraded) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      buf = buf.subarray(end + 4);
      const accept = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head)?.[1];
      if (!head.startsWith('HTTP/1.1 101') || accept !== expectedAccept)
        return failed(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
      upgraded = true;
      opened();
    }
    readFrames();
  });

  /** Takes every whole server frame out of `buf`. */
  function readFrames(): void {
    for (;;) {
      if (buf.length < 2) return;
      const fin = (buf[0]! & 0x80) !== 0;
      const opcode = buf[0]! & 0x0f;
      let len = buf[1]! & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        at = 10;
      }
      if (buf.length < at + len) return;
      const payload = buf.subarray(at, at + len);
      buf = buf.subarray(at + len);
      if (opcode === 0x8) {
        close = {
          code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
          reason: payload.subarray(2).toString('utf8'),
        };
        socket.destroy();
        return finish();
      }
      if (opcode === 0x9) socket.write(maskedFrame(0xa, Buffer.from(payload))); // pong, as every client does
      if (opcode !== 0x1 && opcode !== 0x0) continue;
      message.push(Buffer.from(payload));
      if (!fin) continue;
      const f = JSON.parse(Buffer.concat(message).toString('utf8'));
      message = [];
      const w = waiters.shift();
      if (w) w(f);
      else texts.push(f);
    }
  }

  return {
    opened: openedP,
    send: (text) => void socket.write(maskedFrame(0x1, Buffer.from(text, 'utf8'))),
    next: () =>
      texts.length ? Promise.resolve(texts.shift()) : new Promise((r) => waiters.push(r)),
    stall: () => void socket.pause(),
    drain: () =>
      new Promise((done) => {
        const result = () => done({ frames: texts.splice(0), close });
        if (ended) return result();
        onEnd = result;
        socket.resume();
      }),
    destroy: () => socket.destroy(),
  };
}
