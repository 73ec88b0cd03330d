/**
 * @module hub/mesh/visibility — who reads a direct message through the hub's HTTP routes
 * (`/v1/history`, `/v1/watch`): a bearer token (the mesh's clients and agents) and a fleet node
 * read every message; a console session reads a direct message only when its name is the
 * sender's or the recipient's roster name; anyone else (the loopback `console` session,
 * anonymous callers) sees that a direct message was sent, by whom and to whom, but not what it
 * says (docs/security.md). A mesh server used without the hub (no caller known) shows all.
 */

import type { Principal } from '../../lib/auth/principal.ts';
import type { MeshMessage } from '../../lib/mesh/wire.ts';

const REDACTED_TEXT = '(a direct message: only its sender and recipient read it)';

/** Whether `caller` reads the content of `m`. */
function readsContent(caller: Principal | undefined, m: MeshMessage): boolean {
  if (!caller || m.target.type !== 'agent') return true;
  if (caller.kind === 'token' || caller.kind === 'node') return true;
  if (caller.kind === 'session')
    return caller.name === m.from.name || caller.name === m.target.name;
  return false;
}

/** `m` as `caller` may see it: whole, or with its text and attachments left out. */
export function visibleTo(
  caller: Principal | undefined,
  m: MeshMessage,
): MeshMessage & { redacted?: true } {
  if (readsContent(caller, m)) return m;
  return {
    ...m,
    payload: {
      encoding: 'identity',
      data: REDACTED_TEXT,
      uncompressedBytes: Buffer.byteLength(REDACTED_TEXT),
    },
    attachments: [],
    redacted: true,
  };
}
