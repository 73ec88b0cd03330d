/**
 * @module hub/hub-mesh — the realtime mesh as the hub wires it: the mesh server over the counted
 * store (and the other hubs on its database), the console visitors' own presences, and the hub's
 * policy in front of both: a hello on an unauthenticated socket carries a token the policy knows.
 */

import { ownerKey } from '../lib/auth/principal.ts';
import type { TokenBook } from '../lib/auth/tokens.ts';
import type { MeshStore } from '../lib/mesh/store.ts';
import type { HubAccess } from './http/access.ts';
import type { HubOptions } from './hub-types.ts';
import { createConsolePresences } from './mesh/console-presence.ts';
import { createMeshServer } from './mesh/server.ts';

export interface HubMeshParts {
  access: HubAccess;
  tokens?: TokenBook;
  /** The mesh store as the metrics count it. */
  store: MeshStore;
  /** Where the hub reaches itself, once it listens: console visitors are present through it. */
  selfUrl: () => string | undefined;
}

export function hubMesh(opts: HubOptions, p: HubMeshParts) {
  const { log } = opts;
  const consoleMesh = createConsolePresences({
    hubUrl: p.selfUrl,
    log,
    // Its messages carry the visitor's principal, as a token holder's own would.
    actFor: (project, name, principal) => mesh.actFor(project, name, principal),
  });
  const mesh = createMeshServer({
    store: p.store,
    log,
    cluster: opts.meshCluster,
    // The hub's policy checks the mesh's HTTP routes; a hello on an unauthenticated socket carries a token.
    access: {
      required: p.access.meshProtected,
      verify: (t) => {
        if (consoleMesh.accepts(t)) return { own: true };
        const name = p.tokens?.verify(t);
        return name === undefined ? undefined : { principal: ownerKey({ kind: 'token', name }) };
      },
    },
    limits: opts.meshLimits,
  });
  return { consoleMesh, mesh };
}
