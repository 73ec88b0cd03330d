/**
 * @module mesh/message-json — a message encoded to JSON once and reused: by the `accepted` frame,
 * by every `message` frame that delivers it, and by the notification that carries it to the other
 * hubs. Its sequence is known only once committed, so the encoding is made of two parts: the JSON of
 * every other field, made before the commit, and the sequence and reference put in front of it after.
 */

import { formatRef } from './ref.ts';
import type { CheckedDraft } from './store.ts';
import type { MeshMessage, Peer, Target } from './wire.ts';

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

/**
 * The message of an `unsequencedJson()` text whose routing fields are known already: those are
 * plain fields, and the content (payload, attachments, createdAt, replyTo) is decoded from the JSON
 * on first read. A hub that only routes the message and sends its JSON on never decodes it.
 */
export function lazyMessage(route: { messageId: string; from: Peer; target: Target }, unsequenced: string, project: string, sequence: number): MeshMessage {
  let content: MeshMessage | undefined;
  const decoded = () => (content ??= JSON.parse(unsequenced) as MeshMessage);
  return {
    messageId: route.messageId,
    messageRef: formatRef(project, sequence),
    project,
    sequence,
    from: route.from,
    target: route.target,
    get payload() {
      return decoded().payload;
    },
    get attachments() {
      return decoded().attachments;
    },
    get createdAt() {
      return decoded().createdAt;
    },
    get replyTo() {
      return decoded().replyTo;
    },
  };
}

/** The `message` frame that delivers a message, from its whole JSON. */
export const messageFrame = (json: string): string => `{"type":"message","message":${json}}`;
