/**
 * @module lib/a2a/client/message — what the A2A client puts on the wire for a message: the
 * message built from the caller's input, and SendMessage's params in the client's wire form.
 */

import type { Message, Part, ProtocolVersion } from '../types.ts';
import { messageToV1 } from '../wire/v1.ts';
import { messageToV03 } from '../wire/v03.ts';
import type { MessageInput, SendOptions } from './types.ts';

/** The message a caller's input stands for, with a fresh id unless it brought one. */
function toMessage(input: MessageInput): Message {
  const m = typeof input === 'string' ? { text: input } : input;
  const parts: Part[] = [...(m.parts ?? [])];
  if (m.text !== undefined) parts.push({ text: m.text });
  if (m.data !== undefined) parts.push({ data: m.data, mediaType: 'application/json' });
  const message: Message = { messageId: m.messageId ?? crypto.randomUUID(), role: 'user', parts };
  if (m.contextId) message.contextId = m.contextId;
  if (m.taskId) message.taskId = m.taskId;
  if (m.metadata) message.metadata = m.metadata;
  return message;
}

/** SendMessage's (and SendStreamingMessage's) params; 0.3 says `blocking` where 1.0 says `returnImmediately`. */
export function sendParams(
  version: ProtocolVersion,
  input: MessageInput,
  o: SendOptions = {},
): Record<string, unknown> {
  const configuration: Record<string, unknown> =
    version === '1.0'
      ? { returnImmediately: o.returnImmediately ?? false }
      : { blocking: !(o.returnImmediately ?? false) };
  if (o.historyLength !== undefined) configuration.historyLength = o.historyLength;
  const wireMessage = version === '1.0' ? messageToV1 : messageToV03;
  return { message: wireMessage(toMessage(input)), configuration };
}
