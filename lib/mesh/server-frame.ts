/**
 * @module lib/mesh/server-frame — the client's parser for the hub's frames on `/v1/connect`: every
 * field the client reads is checked, so a malformed or unknown frame is a coded `A2A_INVALID_FRAME`
 * value, never a cast the client trusts.
 */

import { isOwnerKey } from '../auth/principal.ts';
import { isPlainObject } from '../json/guards.ts';
import { parseJsonBody } from '../body.ts';
import { fail, ok, type Result, type WireCode } from './errors.ts';
import { MESH_LIMITS } from './limits.ts';
import { attachmentNameProblem, isMessageId, isProjectName, isRosterName } from './names.ts';
import type { Attachment, TextPayload } from './payload.ts';
import { MESH_WIRE_ERRORS } from '../errors/mesh.ts';
import type { LeaveReason, MeshMessage, Peer, Recovery, ServerFrame, Target } from './wire.ts';

type Bad = { bad: string };
type Obj = Record<string, unknown>;
const bad = (why: string): Bad => ({ bad: why });
const isBad = (v: unknown): v is Bad =>
  !!v && typeof v === 'object' && Object.keys(v).length === 1 && 'bad' in v;
const isStr = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= max;
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
/** Free text the hub sends (error messages, delivery errors): bounded so a hostile hub cannot flood logs. */
const MAX_TEXT = 4096;
/** Ids the client only echoes (request ids, presence ids, epochs, resume secrets). */
const MAX_ID = 128;
const LEAVE_REASONS: readonly LeaveReason[] = [
  'connection_closed',
  'heartbeat_timeout',
  'hub_shutdown',
  'slow_consumer',
  'hub_lost',
];

function peer(v: unknown, at: string): Peer | Bad {
  if (!isPlainObject(v)) return bad(`${at} must be an object`);
  if (!isRosterName(v.name)) return bad(`${at}.name must be a roster name`);
  if (!isStr(v.presenceId, MAX_ID)) return bad(`${at}.presenceId must be a string`);
  if (v.principal === undefined) return { name: v.name, presenceId: v.presenceId };
  if (!isOwnerKey(v.principal)) return bad(`${at}.principal must be an owner key`);
  return { name: v.name, presenceId: v.presenceId, principal: v.principal };
}

function target(v: unknown): Target | Bad {
  if (!isPlainObject(v)) return bad('message.target must be an object');
  if (v.type === 'project') return { type: 'project' };
  if (v.type !== 'agent' || !isRosterName(v.name))
    return bad('message.target must be a project or a named agent');
  if (v.presenceId !== undefined && !isStr(v.presenceId, MAX_ID))
    return bad('message.target.presenceId must be a string');
  return v.presenceId === undefined
    ? { type: 'agent', name: v.name }
    : { type: 'agent', name: v.name, presenceId: v.presenceId };
}

function payload<E extends string>(v: unknown, encodings: readonly E[], at: string) {
  if (!isPlainObject(v)) return bad(`${at} must be an object`);
  if (!encodings.includes(v.encoding as E)) return bad(`${at}.encoding is not one of ${encodings}`);
  if (typeof v.data !== 'string' || v.data.length > MESH_LIMITS.maxFrameBytes)
    return bad(`${at}.data must be a string`);
  if (!isCount(v.uncompressedBytes) || v.uncompressedBytes > MESH_LIMITS.maxContentBytes)
    return bad(`${at}.uncompressedBytes must be a count within the content limit`);
  return { encoding: v.encoding as E, data: v.data, uncompressedBytes: v.uncompressedBytes };
}

function message(v: unknown): MeshMessage | Bad {
  if (!isPlainObject(v)) return bad('message must be an object');
  if (!isMessageId(v.messageId)) return bad('message.messageId must be a message id');
  if (!isStr(v.messageRef, MAX_ID * 2)) return bad('message.messageRef must be a string');
  if (!isProjectName(v.project)) return bad('message.project must be a project name');
  if (!isCount(v.sequence)) return bad('message.sequence must be a non-negative integer');
  if (typeof v.createdAt !== 'number' || !Number.isFinite(v.createdAt))
    return bad('message.createdAt must be a number');
  if (v.replyTo !== undefined && !isStr(v.replyTo, MAX_ID * 2))
    return bad('message.replyTo must be a string');
  const from = peer(v.from, 'message.from');
  if (isBad(from)) return from;
  const to = target(v.target);
  if (isBad(to)) return to;
  const text = payload(v.payload, ['identity', 'gzip+base64'] as const, 'message.payload');
  if (isBad(text)) return text;
  if (!Array.isArray(v.attachments) || v.attachments.length > MESH_LIMITS.maxAttachments)
    return bad(`message.attachments must be an array of at most ${MESH_LIMITS.maxAttachments}`);
  const attachments: Attachment[] = [];
  for (const a of v.attachments as unknown[]) {
    if (!isPlainObject(a)) return bad('message.attachments[] must be objects');
    const problem = attachmentNameProblem(a.name, MESH_LIMITS.maxAttachmentNameBytes);
    if (problem) return bad(`message.attachments[]: ${problem}`);
    const p = payload(a.payload, ['base64', 'gzip+base64'] as const, 'attachment.payload');
    if (isBad(p)) return p;
    attachments.push({ name: a.name as string, payload: p });
  }
  return {
    messageId: v.messageId,
    messageRef: v.messageRef,
    project: v.project,
    sequence: v.sequence,
    from,
    target: to,
    payload: text as TextPayload,
    attachments,
    createdAt: v.createdAt,
    ...(v.replyTo !== undefined ? { replyTo: v.replyTo as string } : {}),
  };
}

function recovery(v: unknown): Recovery | Bad | undefined {
  if (v === undefined) return undefined;
  if (
    !isPlainObject(v) ||
    typeof v.recovered !== 'boolean' ||
    !isCount(v.since) ||
    !isCount(v.replayed)
  )
    return bad('claimed.recovery must be {recovered, since, replayed}');
  return { recovered: v.recovered, since: v.since, replayed: v.replayed };
}

// long: one case per server frame of the mesh protocol, each read as strictly as the hub reads the client's
function frame(f: Obj): ServerFrame | Bad {
  switch (f.type) {
    case 'claimed': {
      if (!isCount(f.protocolVersion)) return bad('claimed.protocolVersion must be an integer');
      if (!isProjectName(f.project)) return bad('claimed.project must be a project name');
      const self = peer(f.self, 'claimed.self');
      if (isBad(self)) return self;
      if (!Array.isArray(f.peers)) return bad('claimed.peers must be an array');
      const peers: Peer[] = [];
      for (const p of f.peers as unknown[]) {
        const one = peer(p, 'claimed.peers[]');
        if (isBad(one)) return one;
        peers.push(one);
      }
      if (!isStr(f.epoch, MAX_ID)) return bad('claimed.epoch must be a string');
      if (!isCount(f.sequence)) return bad('claimed.sequence must be a non-negative integer');
      if (!isCount(f.heartbeatMs) || !isCount(f.heartbeatMisses))
        return bad('claimed.heartbeatMs and heartbeatMisses must be non-negative integers');
      if (typeof f.resumed !== 'boolean') return bad('claimed.resumed must be a boolean');
      if (f.resumeSecret !== undefined && !isStr(f.resumeSecret, MAX_ID))
        return bad('claimed.resumeSecret must be a string');
      const rec = recovery(f.recovery);
      if (isBad(rec)) return rec;
      return {
        type: 'claimed',
        protocolVersion: f.protocolVersion,
        project: f.project,
        self,
        peers,
        epoch: f.epoch,
        sequence: f.sequence,
        heartbeatMs: f.heartbeatMs,
        heartbeatMisses: f.heartbeatMisses,
        resumed: f.resumed,
        ...(f.resumeSecret !== undefined ? { resumeSecret: f.resumeSecret as string } : {}),
        ...(rec ? { recovery: rec } : {}),
      };
    }
    case 'ping':
      return { type: 'ping' };
    case 'presence_joined': {
      const p = peer(f.peer, 'presence_joined.peer');
      return isBad(p) ? p : { type: 'presence_joined', peer: p };
    }
    case 'presence_left': {
      const p = peer(f.peer, 'presence_left.peer');
      if (isBad(p)) return p;
      if (!LEAVE_REASONS.includes(f.reason as LeaveReason))
        return bad('presence_left.reason is not a known reason');
      return { type: 'presence_left', peer: p, reason: f.reason as LeaveReason };
    }
    case 'accepted': {
      if (!isStr(f.requestId, MAX_ID)) return bad('accepted.requestId must be a string');
      const m = message(f.message);
      if (isBad(m)) return m;
      if (!Array.isArray(f.recipients) || !f.recipients.every((r) => isRosterName(r)))
        return bad('accepted.recipients must be an array of roster names');
      if (f.replayed !== undefined && f.replayed !== true)
        return bad('accepted.replayed must be true when present');
      return {
        type: 'accepted',
        requestId: f.requestId,
        message: m,
        recipients: f.recipients as string[],
        ...(f.replayed === true ? { replayed: true as const } : {}),
      };
    }
    case 'message': {
      const m = message(f.message);
      return isBad(m) ? m : { type: 'message', message: m };
    }
    case 'delivery': {
      if (!isMessageId(f.messageId)) return bad('delivery.messageId must be a message id');
      if (!isRosterName(f.to)) return bad('delivery.to must be a roster name');
      if (f.status === 'delivered' || f.status === 'disconnected')
        return { type: 'delivery', messageId: f.messageId, to: f.to, status: f.status };
      if (f.status !== 'failed') return bad('delivery.status is not a known status');
      if (typeof f.error !== 'string' || f.error.length > MAX_TEXT)
        return bad('delivery.error must be a string');
      return {
        type: 'delivery',
        messageId: f.messageId,
        to: f.to,
        status: 'failed',
        error: f.error,
      };
    }
    case 'error':
      if (typeof f.code !== 'string' || !Object.hasOwn(MESH_WIRE_ERRORS, f.code))
        return bad('error.code is not a known wire code');
      if (typeof f.message !== 'string' || f.message.length > MAX_TEXT)
        return bad('error.message must be a string');
      if (f.requestId !== undefined && !isStr(f.requestId, MAX_ID))
        return bad('error.requestId must be a string');
      return {
        type: 'error',
        code: f.code as WireCode,
        message: f.message,
        ...(f.requestId !== undefined ? { requestId: f.requestId as string } : {}),
      };
    default:
      // Never String() the hub's value: an object whose toString is not a function throws.
      return bad(
        typeof f.type === 'string'
          ? `unsupported frame type ${JSON.stringify(f.type).slice(0, 80)}`
          : `frame type must be a string, not ${f.type === null ? 'null' : Array.isArray(f.type) ? 'array' : typeof f.type}`,
      );
  }
}

/**
 * Parses one frame from the hub, as strictly as the hub parses the client's (lib/mesh/wire.ts):
 * binary and oversized frames, bad JSON, unknown types and wrong or missing fields are refused.
 */
export function parseServerFrame(
  data: unknown,
  maxFrameBytes = MESH_LIMITS.maxFrameBytes,
): Result<ServerFrame, 'A2A_INVALID_FRAME'> & { requestId?: string } {
  if (typeof data !== 'string')
    return fail('A2A_INVALID_FRAME', 'binary frames are not part of the protocol');
  // Length in UTF-16 units is at most the byte length, so only long strings need the exact count.
  if (data.length > maxFrameBytes / 3 && Buffer.byteLength(data) > maxFrameBytes)
    return fail('A2A_INVALID_FRAME', `frame is over ${maxFrameBytes} bytes`);
  const parsed = parseJsonBody(data);
  if (!parsed.ok)
    return fail(
      'A2A_INVALID_FRAME',
      parsed.error.code === 'BAD_JSON'
        ? 'frame is not valid JSON'
        : `frame ${parsed.error.message}`,
    );
  if (!isPlainObject(parsed.result))
    return fail('A2A_INVALID_FRAME', 'frame must be a JSON object');
  const f = frame(parsed.result);
  if (!isBad(f)) return ok(f);
  // A malformed answer to a request still names it, so that send fails now instead of hanging.
  const requestId = parsed.result.requestId;
  return isStr(requestId, MAX_ID)
    ? { ...fail('A2A_INVALID_FRAME', f.bad), requestId }
    : fail('A2A_INVALID_FRAME', f.bad);
}
