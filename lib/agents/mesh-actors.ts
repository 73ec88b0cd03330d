/**
 * @module lib/agents/mesh-actors — what the mesh tools do their work through: a presence (the agent's
 * own connection, with its credentials: peers, history, send) or a reader that asks the hub with
 * no credentials at all (peers and history of a project the hub keeps open; a hub that requires a
 * principal refuses it, which is the point).
 */

import type { MeshClient } from '../mesh/client.ts';
import type { ClientCode, Result } from '../mesh/errors.ts';
import { fail, ok } from '../mesh/errors.ts';
import type { HistoryOptions, HubClient } from '../mesh/http-client.ts';
import type { Attachment } from '../mesh/payload.ts';
import type { MeshMessage } from '../mesh/wire.ts';

export interface MeshRoster {
  project: string;
  self?: string;
  peers: string[];
}

export interface MeshSend {
  target: { type: 'agent'; name: string } | { type: 'project' };
  text: string;
  attachments: Attachment[];
  replyTo?: string;
  messageId?: string;
}

/** The mesh operations a caller's tools may use; `send` absent means read-only. */
export interface MeshActor {
  peers(): Promise<Result<MeshRoster, ClientCode>>;
  history(q: HistoryOptions): Promise<Result<MeshMessage[], ClientCode>>;
  send?(m: MeshSend): Promise<Result<{ ref: string; recipients: string[] }, ClientCode>>;
}

/** Everything through the agent's own presence (its name, its credentials). */
export function presenceActor(client: MeshClient, agentId: string): Required<MeshActor> {
  return {
    async peers() {
      const s = client.status(agentId);
      if (s?.state !== 'connected')
        return fail('A2A_CLIENT_CLOSED', `${agentId} is not connected to the mesh`);
      return ok({ project: s.project, self: s.name, peers: client.peers(agentId) });
    },
    history: (q) => client.history(agentId, q),
    async send(m) {
      const r = await client.send(agentId, {
        target: m.target,
        text: m.text,
        inline: m.attachments,
        ...(m.replyTo ? { replyTo: m.replyTo } : {}),
        ...(m.messageId ? { messageId: m.messageId } : {}),
      });
      return r.ok ? ok({ ref: r.result.message.messageRef, recipients: r.result.recipients }) : r;
    },
  };
}

/** The same presence, read-only: a caller who may read what the agent reads, not speak for it. */
export function readOnly(actor: MeshActor): MeshActor {
  return { peers: actor.peers, history: actor.history };
}

/**
 * Reads the agent's project as nobody: a hub client holding no token. What it gets is what the
 * hub gives anonymous callers (docs/security.md), so a protected project stays closed to it.
 */
export function anonymousReader(
  anonymousHub: HubClient,
  project: () => string | undefined,
): MeshActor {
  const which = () => {
    const p = project();
    return p ? ok(p) : fail('A2A_CLIENT_CLOSED', 'the agent is not connected to the mesh');
  };
  return {
    async peers() {
      const p = which();
      if (!p.ok) return p;
      const r = await anonymousHub.presence(p.result);
      return r.ok ? ok({ project: p.result, peers: r.result.map((x) => x.name) }) : r;
    },
    async history(q) {
      const p = which();
      return p.ok ? anonymousHub.history(p.result, q) : p;
    },
  };
}
