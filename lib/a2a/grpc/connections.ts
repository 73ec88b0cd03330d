/**
 * @module lib/a2a/grpc/connections — the HTTP/2 connections of the gRPC port, bounded like the
 * HTTP/1.1 port's: a bounded number per process and per client address (the excess is closed at
 * once, before it costs more than its descriptor), a connection that has not sent its preface and
 * SETTINGS within the handshake bound is cut, and one with no call open for the idle bound is
 * closed. Without them, half-open sockets alone used up the descriptors the node's HTTP port needs.
 */

import type { Http2Session } from 'node:http2';
import type { GrpcMetrics } from './metrics.ts';

export interface ConnectionBounds {
  /** Connections the port holds at once; one more is closed at once. */
  maxConnections: number;
  /** Connections one client address holds at once; one more is closed at once. */
  maxPerAddress: number;
  /** Time a new connection has to send the HTTP/2 preface and its SETTINGS. */
  handshakeMs: number;
  /** Time a connection with no call open is kept. */
  idleMs: number;
}

/** The open connections of one gRPC server and how many calls each has open. */
export class GrpcConnections {
  /** Each admitted connection and its open calls. */
  readonly sessions = new Map<Http2Session, number>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly bounds: ConnectionBounds,
    private readonly metrics: Pick<GrpcMetrics, 'connectionOpened' | 'cut'>,
  ) {}

  /** Takes a new connection under the bounds, or closes it when the port or its address is full. */
  admit(session: Http2Session): void {
    session.on('error', () => {});
    const address = addressOf(session);
    const fromAddress = this.perAddress.get(address) ?? 0;
    const full =
      this.sessions.size >= this.bounds.maxConnections
        ? 'process_full'
        : fromAddress >= this.bounds.maxPerAddress
          ? 'address_full'
          : undefined;
    if (full) {
      this.metrics.cut(full);
      session.destroy();
      return;
    }
    const closed = this.metrics.connectionOpened();
    this.sessions.set(session, 0);
    this.perAddress.set(address, fromAddress + 1);
    // A session's close() leaves a socket that never sent its preface open: destroy it.
    let spoke = false;
    const handshake = setTimeout(() => {
      this.metrics.cut('handshake_timeout');
      session.destroy();
    }, this.bounds.handshakeMs);
    session.once('remoteSettings', () => {
      spoke = true;
      clearTimeout(handshake);
    });
    session.setTimeout(this.bounds.idleMs, () => {
      // An idle client is told with GOAWAY; one that never finished its preface is cut.
      if (this.sessions.get(session)) return;
      this.metrics.cut('idle');
      spoke ? session.close() : session.destroy();
    });
    session.on('close', () => {
      clearTimeout(handshake);
      closed();
      if (!this.sessions.delete(session)) return;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
  }

  /** A call opened on `session` (a connection with a call open is not idle). */
  callOpened(session: Http2Session | undefined): void {
    if (session && this.sessions.has(session))
      this.sessions.set(session, this.sessions.get(session)! + 1);
  }

  /** A call on `session` closed. */
  callClosed(session: Http2Session | undefined): void {
    if (session && this.sessions.has(session))
      this.sessions.set(session, this.sessions.get(session)! - 1);
  }
}

/** The client's address; a session whose socket is already gone counts under ''. */
function addressOf(session: Http2Session): string {
  try {
    return session.socket?.remoteAddress ?? '';
  } catch {
    return '';
  }
}
