/** @module lib/mesh/wire — the frames of protocol v3 on `/v1/connect`, and the hub's parser for client frames. */

import { isPlainObject } from '../json/guards.ts';
import { fail, ok, type Result, type WireCode } from './errors.ts';
import type { Attachment, TextPayload } from './payload.ts';
import { parseJsonBody } from '../body.ts';

export interface Peer {
  name: string;
  presenceId: string;
  /**
   * The principal the hub proved for the sender (an owner key: `user:<name>`, `node:<name>`),
   * absent when the sender showed none. The hub sets it; a client cannot.
   */
  principal?: string;
}

export type Target = { type: 'agent'; name: string; presenceId?: string } | { type: 'project' };

export interface MeshMessage {
  messageId: string;
  messageRef: string;
  project: string;
  sequence: number;
  from: Peer;
  target: Target;
  payload: TextPayload;
  attachments: Attachment[];
  createdAt: number;
  replyTo?: string;
}

/** Why a presence left; `hub_lost` means its hub stopped renewing its lease (several hubs on one database). */
export type LeaveReason =
  | 'connection_closed'
  | 'heartbeat_timeout'
  | 'hub_shutdown'
  | 'slow_consumer'
  | 'hub_lost';

/** What a reconnecting client last saw of its project's stream: the stream's epoch and the highest sequence it handled. */
export interface StreamPosition {
  epoch: string;
  since: number;
}

/** How a claim's replay went: `recovered` is false when messages after `since` were left out (limit, budget, or a new stream). */
export interface Recovery {
  recovered: boolean;
  since: number;
  replayed: number;
}

export type ClientFrame =
  | {
      type: 'hello';
      protocolVersion: unknown;
      project: unknown;
      name: unknown;
      token?: unknown;
      /** `true`: claim without a principal, whatever the token proves. */
      anonymous?: unknown;
      resume?: unknown;
      recover?: unknown;
    }
  | {
      type: 'message';
      requestId: string;
      messageId: unknown;
      target: unknown;
      payload: unknown;
      attachments: unknown;
      replyTo: unknown;
    }
  | { type: 'delivered'; messageId: string }
  | { type: 'delivery_failed'; messageId: string; error: string };

export type ServerFrame =
  | {
      type: 'claimed';
      protocolVersion: number;
      project: string;
      self: Peer;
      peers: Peer[];
      /** The project's stream: its epoch (changes when the project is recreated) and its last committed sequence. */
      epoch: string;
      sequence: number;
      heartbeatMs: number;
      heartbeatMisses: number;
      /** True when the hello's resume secret took over the name's live presence (same presenceId). */
      resumed: boolean;
      /** Given on a fresh claim only; presenting it in a later hello takes this presence over. */
      resumeSecret?: string;
      /** Present when the hello asked to recover; the replayed `message` frames follow. */
      recovery?: Recovery;
    }
  | { type: 'ping' }
  | { type: 'presence_joined'; peer: Peer }
  | { type: 'presence_left'; peer: Peer; reason: LeaveReason }
  | {
      type: 'accepted';
      requestId: string;
      message: MeshMessage;
      recipients: string[];
      replayed?: true;
    }
  | { type: 'message'; message: MeshMessage }
  | { type: 'delivery'; messageId: string; to: string; status: 'delivered' | 'disconnected' }
  | { type: 'delivery'; messageId: string; to: string; status: 'failed'; error: string }
  | { type: 'error'; code: WireCode; message: string; requestId?: string };

export type DeliveryFrame = Extract<ServerFrame, { type: 'delivery' }>;

const isStr = (v: unknown, max = 128): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= max;

/** Cuts a string to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s;
  let out = '';
  let used = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (used + n > maxBytes) break;
    out += ch;
    used += n;
  }
  return out;
}

/**
 * Parses one text frame from a client. Only the frame's shape is checked here; names, ids and
 * content are checked where they are used, so those failures carry their own codes.
 */
export function parseClientFrame(
  text: string,
  maxErrorBytes = 512,
): Result<ClientFrame, 'invalid_frame'> {
  const parsed = parseJsonBody(text);
  if (!parsed.ok)
    return fail(
      'invalid_frame',
      parsed.error.code === 'BAD_JSON'
        ? 'frame is not valid JSON'
        : `frame ${parsed.error.message}`,
    );
  const v = parsed.result;
  if (!isPlainObject(v)) return fail('invalid_frame', 'frame must be a JSON object');
  const f = v as Record<string, unknown>;
  switch (f.type) {
    case 'hello':
      return ok({
        type: 'hello',
        protocolVersion: f.protocolVersion,
        project: f.project,
        name: f.name,
        token: f.token,
        anonymous: f.anonymous,
        resume: f.resume,
        recover: f.recover,
      });
    case 'message':
      if (!isStr(f.requestId))
        return fail('invalid_frame', 'message.requestId must be a string of 1 to 128 characters');
      return ok({
        type: 'message',
        requestId: f.requestId,
        messageId: f.messageId,
        target: f.target,
        payload: f.payload,
        attachments: f.attachments,
        replyTo: f.replyTo,
      });
    case 'delivered':
      if (!isStr(f.messageId)) return fail('invalid_frame', 'delivered.messageId must be a string');
      return ok({ type: 'delivered', messageId: f.messageId });
    case 'delivery_failed':
      if (!isStr(f.messageId))
        return fail('invalid_frame', 'delivery_failed.messageId must be a string');
      if (typeof f.error !== 'string')
        return fail('invalid_frame', 'delivery_failed.error must be a string');
      return ok({
        type: 'delivery_failed',
        messageId: f.messageId,
        error: truncateUtf8(f.error, maxErrorBytes),
      });
    default:
      // Never String() a client's value: an object whose toString is not a function throws.
      return fail(
        'invalid_frame',
        typeof f.type === 'string'
          ? `unsupported frame type ${JSON.stringify(f.type).slice(0, 80)}`
          : `frame type must be a string, not ${f.type === null ? 'null' : Array.isArray(f.type) ? 'array' : typeof f.type}`,
      );
  }
}
