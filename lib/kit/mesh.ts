/**
 * @module lib/kit/mesh — the package's mesh client (`lume-a2a/mesh`): presences on a hub's realtime
 * mesh, messages and attachments, reconnect and recovery.
 */

export {
  createMeshClient,
  type ClientEvents,
  type InboundMessage,
  type MembershipState,
  type MembershipStatus,
  type MeshClient,
  type MeshClientOptions,
  type SendRequest,
} from '../mesh/client.ts';
export {
  fileConnectionMemory,
  memoryConnectionMemory,
  type ConnectionMemory,
  type RememberedConnection,
} from '../mesh/memory.ts';
export type { MeshMessage, Peer, Target } from '../mesh/wire.ts';
