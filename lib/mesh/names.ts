/** @module lib/mesh/names — the name rules of the mesh: projects, roster names, message ids. */

const PROJECT = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/;
const ROSTER = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,31}$/;
const MESSAGE_ID = /^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$/;

export const isProjectName = (v: unknown): v is string => typeof v === 'string' && PROJECT.test(v);
export const isRosterName = (v: unknown): v is string => typeof v === 'string' && ROSTER.test(v);
export const isMessageId = (v: unknown): v is string => typeof v === 'string' && MESSAGE_ID.test(v);

/** Attachment file names: at most 255 UTF-8 bytes, no separators, no control characters, not `.`/`..`. */
export function attachmentNameProblem(name: unknown, maxBytes = 255): string | undefined {
  if (typeof name !== 'string' || name.length === 0)
    return 'attachment name must be a non-empty string';
  if (Buffer.byteLength(name) > maxBytes) return `attachment name is over ${maxBytes} bytes`;
  if (name === '.' || name === '..') return 'attachment name cannot be . or ..';
  if (/[/\\]/.test(name)) return 'attachment name cannot contain / or \\';
  // C0, DEL and C1 controls: a name ends up as a file name on the receiver.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name))
    return 'attachment name cannot contain control characters';
  return undefined;
}

/**
 * A fresh message id the hub accepts: a UUIDv7, whose leading timestamp makes each new id sort
 * after the last, so the stores' unique index on message ids appends instead of writing a random
 * page per message (the cost UUIDv7 task ids took off the task index); its last 64 bits are random.
 */
export const newMessageId = (): string => `m-${Bun.randomUUIDv7()}`;
