/**
 * @module hub/fleet/remove — `bun run fleet remove <name>`: drops a node run elsewhere (added with
 * `fleet add` or a join) from the fleet file and its key from the ring. A running hub follows the
 * files within seconds; the node, if it joins again, is a newcomer.
 */

import { JOIN_ERRORS } from '../../lib/errors/join.ts';
import { fail, ok, type Result } from '../../lib/errors/result.ts';
import { forgetKey } from '../../lib/peer/keys.ts';
import { editableFleet, saveFleet } from './fleet-file.ts';

export async function removeRemoteNode(o: {
  name: string;
  /** The fleet file read now, and the one written. */
  from: string;
  to: string;
  dataDir: string;
}): Promise<Result<{ name: string; file: string }>> {
  const doc = editableFleet(o.from, o.to);
  const entry = doc.nodes.find((n) => n.name === o.name);
  if (!entry)
    return fail('FLEET_REMOVE_UNKNOWN', `${JOIN_ERRORS.FLEET_REMOVE_UNKNOWN.message}: ${o.name}`);
  if (entry.remote !== true)
    return fail('FLEET_REMOVE_LOCAL', `${o.name}: ${JOIN_ERRORS.FLEET_REMOVE_LOCAL.message}`);
  // The fleet file first: a hub that reads it between the two writes no longer calls the node.
  await saveFleet(o.to, { ...doc, nodes: doc.nodes.filter((n) => n.name !== o.name) });
  await forgetKey(o.dataDir, o.name);
  return ok({ name: o.name, file: o.to });
}
