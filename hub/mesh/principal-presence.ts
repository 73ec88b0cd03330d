/**
 * @module hub/mesh/principal-presence — how a presence the hub holds for a principal (an MCP
 * session's, hub/mcp/mesh-presence.ts; a console visitor's, hub/mesh/console-presence.ts) joins a
 * project: under the principal's own name, or `name-2` … `name-9` when that name is present already.
 */

import type { MeshClient } from '../../lib/mesh/client.ts';

/** Names tried after the principal's own when it is present already. */
export const MAX_NAME_SUFFIX = 9;

export type Joined = { ok: true; name: string } | { ok: false; message: string };

/** Joins `project` as `agentId` under the first free name; a failure other than a taken name stops. */
export async function joinUnderName(
  client: MeshClient,
  agentId: string,
  project: string,
  name: string,
): Promise<Joined> {
  for (let i = 1; i <= MAX_NAME_SUFFIX; i++) {
    const tried = i === 1 ? name : `${name}-${i}`;
    const s = await client.connect(agentId, project, tried);
    if (s.state === 'connected') return { ok: true, name: tried };
    if (s.lastError?.code !== 'A2A_NAME_IN_USE') {
      await client.disconnect(agentId);
      return { ok: false, message: `cannot join the mesh: ${s.lastError?.message ?? s.state}` };
    }
  }
  // The client keeps retrying a taken name; this presence gives up instead.
  await client.disconnect(agentId);
  return {
    ok: false,
    message: `the names ${name} … ${name}-${MAX_NAME_SUFFIX} are all present already`,
  };
}
