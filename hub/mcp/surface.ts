/**
 * @module hub/mcp/surface — the hub's MCP endpoint (`/mcp`, Streamable HTTP) and the fleet's AI
 * Catalog (`/.well-known/ai-catalog.json`) with ARD's search (`/ard/*`, hub/fleet/discovery.ts)
 * as one piece of the hub: the tools are the fleet's capabilities, the mesh tools, `ask`, `delegate` and `get_task`; the resources are the members'
 * cards and the recent trace. The hub's access policy has admitted every request and says who
 * sent it; an anonymous caller gets the read-only tools on loopback and nothing beyond it.
 */

import { bearerOf, type AnonymousAccess } from '../../lib/auth/access.ts';
import type { Principal } from '../../lib/auth/principal.ts';
import type { SseStreams } from '../../lib/sse/sse.ts';
import type { TaskEngine } from '../../lib/a2a/engine/engine.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { Fleet } from '../../lib/config/fleet-file.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import type { TraceStore } from '../../lib/fleet/trace.ts';
import type { Log } from '../../lib/log.ts';
import { createMcpHttp } from '../../lib/mcp/http.ts';
import { MCP_LIMITS, type McpLimits } from '../../lib/mcp/limits.ts';
import { createMcpServer } from '../../lib/mcp/server.ts';
import { McpSessions } from '../../lib/mcp/sessions.ts';
import { createTaskTable } from '../../lib/mcp/tasks.ts';
import { createCardReader, type Card, type CheckedSignature } from '../fleet/cards.ts';
import { createDiscovery } from '../fleet/discovery.ts';
import type { CatalogTool } from '../workbench/ask-planner.ts';
import type { AskAnswer } from '../workbench/ask.ts';
import { createFleetTools } from './fleet-tools.ts';
import { createMeshListens } from './mesh-listen.ts';
import { createMcpMesh } from './mesh-presence.ts';
import { createResources } from './resources.ts';
import { createWorkTools } from './work-tools.ts';

const MCP_PATH = '/mcp';

export interface HubMcpDeps {
  fleet: Fleet;
  invoker: FleetInvoker;
  trace: TraceStore;
  log: Log;
  hubCatalog: Catalog;
  /** The fleet catalog (resolve.catalog, or the nodes' /capabilities). */
  fleetCatalog: () => Promise<CatalogTool[] | { error: string }>;
  ask: (question: string) => Promise<AskAnswer>;
  engine: () => TaskEngine;
  ownCard: () => Card;
  /** The hub's checks of its members' card signatures (the fleet view's, when it makes them). */
  cardChecks?: () => Promise<ReadonlyMap<string, CheckedSignature | undefined>>;
  /** The hub's own address once it listens (for its card URL and the MCP sessions' mesh presences). */
  selfUrl: () => string | undefined;
  /** The hub's own origins: a browser page from anywhere else is refused. */
  origins: () => string[];
  anonymous: AnonymousAccess;
  meshProject: string;
  streams?: SseStreams;
  limits?: Partial<McpLimits>;
  fetch?: typeof fetch;
  /** The fleet's change feed: a member that came, went or changed is listed afresh and announced. */
  onFleetChange?: (fn: () => void) => () => void;
}

const version = '0.1.0';
const INSTRUCTIONS =
  'Tools named <node>_<capability> call that fleet node (read-only ones are marked); ask answers a question from the fleet; delegate hands a job to an executor (follow it with get_task); a2a_peers, a2a_message and a2a_history speak in the mesh under your name. A client that declares the io.modelcontextprotocol/tasks extension gets delegate and the tools that change state as tasks (follow them with tasks/get). Every call is traced on the hub.';

export function createHubMcp(deps: HubMcpDeps) {
  const limits: McpLimits = { ...MCP_LIMITS, ...deps.limits };
  const sessions = new McpSessions(limits);
  const tasks = createTaskTable(limits);
  const baseUrl = () => deps.selfUrl() ?? deps.fleet.hub.url;
  const cards = createCardReader({
    fleet: deps.fleet,
    own: () => ({ card: deps.ownCard(), baseUrl: baseUrl() }),
    checks: deps.cardChecks,
    fetch: deps.fetch,
  });
  const fleetTools = createFleetTools({
    invoker: deps.invoker,
    hub: { name: deps.fleet.hub.name, catalog: deps.hubCatalog },
    nodeNames: () => deps.fleet.nodes.map((n) => n.name),
    catalog: deps.fleetCatalog,
  });
  const inMesh = { hubUrl: deps.selfUrl, project: deps.meshProject, log: deps.log };
  const listens = createMeshListens(inMesh);
  const mesh = createMcpMesh({ ...inMesh, sessions, stateless: listens });
  const work = createWorkTools({
    ask: deps.ask,
    engine: deps.engine,
    delegateArgs: deps.hubCatalog.find('task.delegate')?.args ?? {},
    pollMs: limits.taskPollMs,
  });
  const resources = createResources({ cards: () => cards.cards(), trace: deps.trace });
  // Connected clients hear that the lists changed, and list again (MCP `listChanged`).
  const stopFollowing = deps.onFleetChange?.(() => {
    fleetTools.invalidate();
    cards.invalidate();
    sessions.notifyAll('notifications/tools/list_changed');
    sessions.notifyAll('notifications/resources/list_changed');
  });
  const server = createMcpServer({
    info: { name: 'lume-a2a-hub', title: `lume-a2a fleet (hub ${deps.fleet.hub.name})`, version },
    instructions: INSTRUCTIONS,
    limits,
    tasks,
    tools: {
      list: async ({ caller }) => [
        ...(await fleetTools.list(caller)),
        ...work.list(caller),
        ...mesh.list(caller),
      ],
      call: async (name, args, { session, caller }) =>
        (await work.call(name, args, caller)) ??
        (await mesh.call(name, args, session, caller)) ??
        (await fleetTools.call(name, args, caller)),
    },
    resources: {
      list: async ({ caller, session }) => [
        ...(await resources.list()),
        ...listens.list(caller, session !== undefined),
      ],
      read: async (uri, { caller }) => listens.read(uri, caller) ?? resources.read(uri),
    },
    onError: (method, e) =>
      deps.log('error', 'mcp request failed', { method, error: (e as Error)?.name ?? 'unknown' }),
  });
  const http = createMcpHttp({
    server,
    sessions,
    limits,
    allowedOrigin: (o) => deps.origins().includes(o),
    anonymousAllowed: deps.anonymous !== 'none',
    streams: deps.streams,
    onListen: listens.onListen,
    onSession: (s, _caller, req) => {
      const token = bearerOf(req);
      mesh.attach(s, typeof token === 'string' ? token : undefined);
    },
  });

  const discovery = createDiscovery({
    cards: () => cards.cards(),
    baseUrl,
    hubName: deps.fleet.hub.name,
    anonymous: deps.anonymous,
  });

  return {
    sessions,
    /** The answer for the MCP endpoint and the catalog; undefined for any other path. */
    fetch(req: Request, caller: Principal, client?: string): Promise<Response> | undefined {
      const path = new URL(req.url).pathname;
      if (path === MCP_PATH) return http.fetch(req, caller, client);
      return discovery.fetch(req, caller);
    },
    close: () => {
      stopFollowing?.();
      listens.close();
      tasks.close();
      return sessions.endAll();
    },
  };
}
