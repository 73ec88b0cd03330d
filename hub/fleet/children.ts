/**
 * @module hub/fleet/children — the processes `bun run fleet` supervises: the hub and every default
 * node, each a `bun` process preloaded with hub/fleet/exit-with-parent.ts (so it stops when its
 * supervisor dies) and reading request headers up to lib/net/header-limit.ts's bound, with the
 * health route the supervisor probes.
 */

import { join } from 'node:path';
import type { Fleet } from '../../lib/config/fleet-file.ts';
import { HEADER_SIZE_FLAG } from '../../lib/net/header-limit.ts';
import type { ChildSpec } from './supervisor.ts';

/** The members `bun run fleet` starts: the hub, then the default nodes (remote ones run elsewhere). */
export function fleetMembers(fleet: Fleet) {
  return [fleet.hub, ...fleet.nodes.filter((n) => n.default && !n.remote)];
}

/** One child per member; `root` is the project folder the commands run in. */
export function fleetChildren(fleet: Fleet, root: string): ChildSpec[] {
  const exitWithParent = join(root, 'hub', 'fleet', 'exit-with-parent.ts');
  return fleetMembers(fleet).map((m) => ({
    name: m.name,
    port: m.port,
    cmd: [
      'bun',
      HEADER_SIZE_FLAG,
      '--preload',
      exitWithParent,
      ...(m === fleet.hub ? ['hub/main.ts'] : ['node/main.ts', '--name', m.name]),
    ],
    healthUrl: `${m.url}/healthz`,
  }));
}
