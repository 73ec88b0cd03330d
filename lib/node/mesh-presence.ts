/**
 * @module lib/node/mesh-presence — a node's presence on the mesh when `mesh.autoConnect` is set:
 * the inbox that hands each inbound message to the node's agent and posts its answer
 * (lib/node/mesh-inbox.ts), the reconnecting mesh client, and the mesh tools its model gets
 * (a2a_peers, a2a_message, a2a_history), acting as the caller whose message the model answers.
 */

import { join } from 'node:path';
import type { Settings } from '../config.ts';
import type { Log } from '../log.ts';
import { createMeshClient, type MeshClient } from '../mesh/client.ts';
import { createHubClient, hubUrlList } from '../mesh/http-client.ts';
import type { Principal } from '../auth/principal.ts';
import { anonymousReader, presenceActor } from '../agents/mesh-actors.ts';
import { meshToolsFor } from '../agents/mesh-tools.ts';
import type { AgentTool } from '../agents/model-agent.ts';
import { createMeshInbox } from './mesh-inbox.ts';

export interface MeshPresence {
  inbox: ReturnType<typeof createMeshInbox>;
  mesh: MeshClient;
  /** The mesh tools of a model that answers `caller`. */
  toolsFor: (caller: Principal) => AgentTool[];
  /**
   * Whether the mesh hub is the fleet's hub, whose word on a sender's principal the node takes
   * (it names principals to the node on `/peer/invoke` already); another hub's senders are anonymous.
   */
  trustHub: boolean;
}

/** The node's presence, or undefined when the mesh is off or no hub URL is known. */
export function meshPresence(
  name: string,
  settings: Settings,
  opts: { fleetHubUrl?: string; dataDir: string; log: Log },
): MeshPresence | undefined {
  const [hubUrl, ...otherUrls] = hubUrlList(settings.mesh.hubUrl ?? opts.fleetHubUrl);
  if (!settings.mesh.autoConnect || !hubUrl) return undefined;
  const inbox = createMeshInbox({
    name,
    post: (req) => mesh.send(name, req),
    log: opts.log,
    queueLimit: settings.mesh.inboxMessages,
  });
  const mesh = createMeshClient({
    hubUrl,
    hubUrls: otherUrls,
    log: opts.log,
    reconnectMs: settings.mesh.reconnectMs,
    ...(settings.hub.token ? { token: settings.hub.token } : {}),
    // What the agent posts is its model's words, never a principal's request: another node must
    // not run it as this node's token (it would lend the token to whoever made the model say it).
    anonymous: true,
    onInbound: (m) => inbox.take(m),
  });
  const reader = anonymousReader(
    createHubClient({ baseUrl: hubUrl, otherUrls }),
    () => mesh.status(name)?.project,
  );
  const toolsFor = (caller: Principal) =>
    meshToolsFor(caller, {
      self: name,
      presence: presenceActor(mesh, name),
      anonymous: reader,
      dataDir: join(opts.dataDir, name),
    });
  const trustHub = opts.fleetHubUrl !== undefined && sameOrigin(hubUrl, opts.fleetHubUrl);
  return { inbox, mesh, toolsFor, trustHub };
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
