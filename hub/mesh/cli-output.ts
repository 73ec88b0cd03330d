/**
 * @module hub/mesh/cli-output — how the `bun run mesh` commands print: one line per message, a
 * coded error, and the exit codes of a failure (1) and of a usage mistake (2).
 */

import type { ClientCode, MeshError } from '../../lib/mesh/errors.ts';
import { decodeText } from '../../lib/mesh/payload.ts';
import type { MeshMessage } from '../../lib/mesh/wire.ts';

/** One history line: `demo:3 2025-01-01T00:00:00.000Z alice -> bob: text [files: a.txt]`. */
export function formatMessage(m: MeshMessage): string {
  const to = m.target.type === 'agent' ? m.target.name : '*';
  const files = m.attachments.length
    ? ` [files: ${m.attachments.map((a) => a.name).join(', ')}]`
    : '';
  const reply = m.replyTo ? ` (reply to ${m.replyTo})` : '';
  return `${m.messageRef} ${new Date(m.createdAt).toISOString()} ${m.from.name} -> ${to}${reply}: ${decodeText(m.payload)}${files}`;
}

export const fmtError = (e: MeshError<ClientCode>) => `error ${e.code}: ${e.message}`;

/** Prints a coded error; answers the exit code 1. */
export type Fail = (e: MeshError<ClientCode>) => number;
/** Prints a usage mistake; answers the exit code 2. */
export type Usage = (msg: string) => number;
