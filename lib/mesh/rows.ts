/** @module lib/mesh/rows — how a message is laid out in a `messages` row, and the content fingerprint used for idempotency. */

import type { Attachment, TextPayload } from './payload.ts';
import { formatRef } from './ref.ts';
import type { MeshMessage, Target } from './wire.ts';

export interface MessageRow {
  project: string;
  sequence: number;
  msg_id: string;
  sender_name: string;
  sender_presence_id: string;
  target_kind: string;
  target_name: string | null;
  target_presence_id: string | null;
  encoding: string;
  data: string;
  uncompressed_bytes: number;
  attachments: string;
  content_bytes: number;
  created_at: number;
  reply_to_sequence: number | null;
  /** The sender's proven principal (an owner key), null when it showed none. */
  sender_principal: string | null;
}

/** Keeps only the fields of the wire model, in a fixed order (callers may send extra keys). */
export const normalizeAttachments = (list: Attachment[]): Attachment[] =>
  list.map((a) => ({
    name: a.name,
    payload: {
      encoding: a.payload.encoding,
      data: a.payload.data,
      uncompressedBytes: a.payload.uncompressedBytes,
    },
  }));

export const normalizePayload = (p: TextPayload): TextPayload => ({
  encoding: p.encoding,
  data: p.data,
  uncompressedBytes: p.uncompressedBytes,
});

export function rowToMessage(r: MessageRow): MeshMessage {
  const target: Target =
    r.target_kind === 'project'
      ? { type: 'project' }
      : r.target_presence_id
        ? { type: 'agent', name: r.target_name ?? '', presenceId: r.target_presence_id }
        : { type: 'agent', name: r.target_name ?? '' };
  const m: MeshMessage = {
    messageId: r.msg_id,
    messageRef: formatRef(r.project, r.sequence),
    project: r.project,
    sequence: r.sequence,
    from: r.sender_principal
      ? { name: r.sender_name, presenceId: r.sender_presence_id, principal: r.sender_principal }
      : { name: r.sender_name, presenceId: r.sender_presence_id },
    target,
    payload: {
      encoding: r.encoding as TextPayload['encoding'],
      data: r.data,
      uncompressedBytes: r.uncompressed_bytes,
    },
    attachments: JSON.parse(r.attachments) as Attachment[],
    createdAt: r.created_at,
  };
  if (r.reply_to_sequence !== null) m.replyTo = formatRef(r.project, r.reply_to_sequence);
  return m;
}

/** The values in column order for `INSERT INTO messages VALUES (…)`. */
export function messageToValues(m: MeshMessage, contentBytes: number, replySeq: number | null) {
  return [
    m.project,
    m.sequence,
    m.messageId,
    m.from.name,
    m.from.presenceId,
    m.target.type,
    m.target.type === 'agent' ? m.target.name : null,
    m.target.type === 'agent' ? (m.target.presenceId ?? null) : null,
    m.payload.encoding,
    m.payload.data,
    m.payload.uncompressedBytes,
    JSON.stringify(m.attachments),
    contentBytes,
    m.createdAt,
    replySeq,
    m.from.principal ?? null,
  ] as const;
}

/**
 * What decides "same message" for an id retry: project, sender name, target, text, attachments and
 * reply. The presence ids and `createdAt` are ignored, so a retry after a reconnect still matches.
 */
export function fingerprint(
  m: Pick<MeshMessage, 'project' | 'from' | 'target' | 'payload' | 'attachments' | 'replyTo'>,
): string {
  const target = m.target.type === 'agent' ? `agent:${m.target.name}` : 'project';
  return JSON.stringify([
    m.project,
    m.from.name,
    target,
    normalizePayload(m.payload),
    normalizeAttachments(m.attachments),
    m.replyTo ?? null,
  ]);
}
