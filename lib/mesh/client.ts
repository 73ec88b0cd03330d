/**
 * @module lib/mesh/client — the mesh client: one presence per local agent, reconnect with backoff
 * (500 ms doubling to 10 s, reset after a claim, stopped by unknown_project / protocol_mismatch; a
 * taken name is retried, since whoever holds it may leave; with several hub addresses, to the next
 * hub in turn) that resumes its own presence and recovers missed messages, serial inbound
 * handling with attachments written to disk, delivery and presence events, remembered connections
 * and the local activity view. This file wires the parts: memberships across reconnects
 * (lib/mesh/client-membership.ts) and the messages through them (client-messages.ts), over the
 * shared state of client-context.ts and the shapes of client-types.ts.
 */

import { createClientContext } from './client-context.ts';
import type { MembershipStatus, MeshClientOptions, SendRequest } from './client-types.ts';
import { join, stop } from './client-membership.ts';
import { sendFrom } from './client-messages.ts';
import { fail, type ClientCode, type Result } from './errors.ts';
import type { HistoryOptions } from './http-client.ts';
import type { RememberedConnection } from './memory.ts';
import type { MeshMessage } from './wire.ts';
import type { SendReceipt } from './connection.ts';

export type {
  ClientEvents,
  ClientTimers,
  InboundMessage,
  MembershipState,
  MembershipStatus,
  MeshClientOptions,
  SendRequest,
} from './client-types.ts';

export type MeshClient = ReturnType<typeof createMeshClient>;

export function createMeshClient(o: MeshClientOptions) {
  const ctx = createClientContext(o);
  const http = ctx.httpOf(o.hubUrl);
  const { members } = ctx;

  return {
    http,
    on: ctx.events.on,

    /**
     * Joins `project` as `name` for `agentId` (one presence per agent). Calling again with the same
     * project and name returns the current status; a different one leaves the old presence first.
     * Resolves after the first attempt; failures other than the stop codes keep retrying.
     */
    async connect(
      agentId: string,
      project: string,
      name = agentId,
      saved?: RememberedConnection,
    ): Promise<MembershipStatus> {
      const existing = members.get(agentId);
      if (existing && existing.project === project && existing.name === name && existing.desired)
        return existing.status();
      if (existing) await stop(ctx, existing);
      return (await join(ctx, agentId, project, name, saved)).status();
    },

    /** Leaves on purpose: the presence ends and the remembered connection is forgotten. */
    async disconnect(agentId: string): Promise<void> {
      const m = members.get(agentId);
      if (m) {
        await stop(ctx, m);
        m.enter('stopped');
      }
      await o.memory?.forget(agentId);
    },

    /** Rejoins every remembered connection (after a restart). */
    async restore(): Promise<MembershipStatus[]> {
      const saved = (await o.memory?.load()) ?? {};
      return Promise.all(
        Object.entries(saved).map(([id, c]) => this.connect(id, c.project, c.name, c)),
      );
    },

    status(agentId: string): MembershipStatus | undefined {
      const m = members.get(agentId);
      return m?.status();
    },

    /** The roster names other than the agent itself. */
    peers(agentId: string): string[] {
      return (
        members
          .get(agentId)
          ?.conn?.peers()
          .map((p) => p.name) ?? []
      );
    },

    /** Sends from an agent's presence; attachments are absolute local paths. */
    send: (agentId: string, req: SendRequest): Promise<Result<SendReceipt, ClientCode>> =>
      sendFrom(ctx, agentId, req),

    /** Reads the agent's project history over HTTP. */
    history(agentId: string, q: HistoryOptions = {}): Promise<Result<MeshMessage[], ClientCode>> {
      const m = members.get(agentId);
      if (!m) return Promise.resolve(fail('A2A_CLIENT_CLOSED', `${agentId} is not connected`));
      return ctx.httpOf(m.hubUrl).history(m.project, q);
    },

    /** Closes every presence without forgetting remembered connections (a process shutting down); their positions are kept. */
    async close(): Promise<void> {
      await Promise.all(
        [...members.values()].map(async (m) => {
          await stop(ctx, m);
          if (m.resumeSecret) await o.memory?.save(m.agentId, m.remembered());
        }),
      );
    },
  };
}
