/**
 * @module mesh/message-json — a message encoded to JSON once and reused: by the `accepted` frame,
 * by every `message` frame that delivers it, and by the notification that carries it to the other
 * hubs. Its sequence is known only once committed, so the encoding is made of two parts: the JSON of
 * every other field, made before the commit, and the sequence and reference put in front of it after.
 */

import { formatRef } from './ref.ts';
import type { CheckedDraft } from './store.ts';
import type { MeshMessage } from './wire.ts';

/** The JSON of a checked message's fields but `sequence` and `messageRef` (the same fields `sequenced()` gives it). */
export function unsequencedJson(c: CheckedDraft, createdAt: number): string {
  const { candidate } = c;
  return JSON.stringify({
    messageId: c.messageId,
    project: candidate.project,
    from: { name: candidate.from.name, presenceId: candidate.from.presenceId },
    target: candidate.target,
    payload: candidate.payload,
    attachments: candidate.attachments,
    createdAt,
    ...(candidate.replyTo ? { replyTo: candidate.replyTo } : {}),
  });
}

/** The message's whole JSON: `sequence` and `messageRef` in front of the fields of `unsequencedJson()`. */
export function sequencedJson(unsequenced: string, project: string, sequence: number): string {
  return `{"sequence":${sequence},"messageRef":${JSON.stringify(formatRef(project, sequence))},${unsequenced.slice(1)}`;
}

/** The message a line of `unsequencedJson()` describes, once its sequence is known. */
export function messageFromJson(unsequenced: string, project: string, sequence: number): MeshMessage {
  const m = JSON.parse(unsequenced) as MeshMessage;
  m.sequence = sequence;
  m.messageRef = formatRef(project, sequence);
  return m;
}

/** The `message` frame that delivers a message, from its whole JSON. */
export const messageFrame = (json: string): string => `{"type":"message","message":${json}}`;
