/**
 * @module hub/mesh/principal-presence — how a presence the hub holds for a principal (an MCP
 * session's, hub/mcp/mesh-presence.ts; a console visitor's, hub/mesh/console-presence.ts) joins a
 * project: under the principal's own name, or `name-2` … `name-9` when that name is present already.
 */

import { fail, ok, type Failure, type Result } from '../../lib/errors/result.ts';
import type { MeshClient } from '../../lib/mesh/client.ts';

/** Names tried after the principal's own when it is present already. */
const MAX_NAME_SUFFIX = 9;

/** The name joined under, or why not: the mesh client's code, A2A_NAME_IN_USE when every name is taken. */
export type Joined = Result<string, Failure>;

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
    if (s.state === 'connected') return ok(tried);
    if (s.lastError?.code !== 'A2A_NAME_IN_USE') {
      await client.disconnect(agentId);
      return fail(
        s.lastError?.code ?? 'A2A_CLIENT_CONNECT',
        `cannot join the mesh: ${s.lastError?.message ?? s.state}`,
      );
    }
  }
  // The client keeps retrying a taken name; this presence gives up instead.
  await client.disconnect(agentId);
  return fail(
    'A2A_NAME_IN_USE',
    `the names ${name} … ${name}-${MAX_NAME_SUFFIX} are all present already`,
  );
}
