/**
 * @module hub/http/routes — the hub's route table, the one list of what the hub serves beside its
 * own node's routes (lib/node/routes.ts): the hub dispatches each request to the part the table
 * names (hub/hub.ts), its metrics label requests with the table's templates (hub/metrics.ts), and
 * docs/routes.md is rendered from it. A path no entry names goes to the hub's node, which answers
 * its own routes and the coded 404.
 */

import {
  NODE_ROUTE_TABLE,
  describeRoute,
  methodsOf,
  nodeRouteTemplates,
} from '../../lib/node/routes.ts';

/** The part of the hub that answers a route. */
export type HubOwner =
  | 'health'
  | 'mcp'
  | 'join'
  | 'mesh'
  | 'console-mesh'
  | 'login'
  | 'api'
  | 'console';

export interface HubRoute {
  methods: readonly string[];
  /** A path, or a template whose `{name}` is one path segment. */
  template: string;
  owner: HubOwner;
  doc: string;
}

const GET = ['GET'] as const;
const POST = ['POST'] as const;

export const HUB_ROUTE_TABLE: readonly HubRoute[] = [
  // The process's health is the node's (its checks include the trace and the mesh store).
  { methods: GET, template: '/healthz', owner: 'health', doc: 'liveness of the hub process' },
  { methods: GET, template: '/readyz', owner: 'health', doc: 'readiness, with its self-checks' },
  {
    methods: ['POST', 'GET', 'DELETE'],
    template: '/mcp',
    owner: 'mcp',
    doc: "MCP (streamable HTTP): the hub's capabilities, the mesh and work as tools",
  },
  {
    methods: GET,
    template: '/.well-known/oauth-protected-resource',
    owner: 'mcp',
    doc: '/mcp as an OAuth protected resource (RFC 9728): its trusted issuers and scopes',
  },
  {
    methods: GET,
    template: '/.well-known/oauth-protected-resource/mcp',
    owner: 'mcp',
    doc: 'the same metadata at the path MCP clients ask first',
  },
  {
    methods: GET,
    template: '/.well-known/ai-catalog.json',
    owner: 'mcp',
    doc: "the fleet's AI Catalog (application/ai-catalog+json)",
  },
  {
    methods: POST,
    template: '/ard/search',
    owner: 'mcp',
    doc: "ARD search over the fleet's members and skills: scored, paged",
  },
  {
    methods: GET,
    template: '/ard/agents',
    owner: 'mcp',
    doc: "ARD browsing of the fleet's catalog entries: filtered, ordered, paged",
  },
  {
    methods: POST,
    template: '/peer/join',
    owner: 'join',
    doc: "a node joins this hub's fleet (a hub token and the node's proof of its key)",
  },
  { methods: GET, template: '/v1/connect', owner: 'mesh', doc: 'the mesh WebSocket (protocol v3)' },
  { methods: GET, template: '/v1/meta', owner: 'mesh', doc: "the mesh hub's process and protocol" },
  { methods: GET, template: '/v1/history', owner: 'mesh', doc: "a project's message history" },
  { methods: GET, template: '/v1/presence', owner: 'mesh', doc: "a project's roster" },
  {
    methods: GET,
    template: '/v1/watch',
    owner: 'mesh',
    doc: "a project's live roster and messages (SSE)",
  },
  { methods: POST, template: '/api/projects.create', owner: 'mesh', doc: 'creates a mesh project' },
  { methods: POST, template: '/api/projects.list', owner: 'mesh', doc: 'lists the mesh projects' },
  { methods: POST, template: '/api/projects.delete', owner: 'mesh', doc: 'deletes a mesh project' },
  {
    methods: ['GET', 'POST'],
    template: '/login',
    owner: 'login',
    doc: "the console's sign-in form",
  },
  {
    methods: POST,
    template: '/login/oidc',
    owner: 'login',
    doc: 'the console signs in through the trusted issuer (authorization code with PKCE)',
  },
  {
    methods: GET,
    template: '/login/oidc/callback',
    owner: 'login',
    doc: "where the issuer sends the browser back: the code exchanged, the person's session made",
  },
  { methods: POST, template: '/logout', owner: 'login', doc: 'ends the console session' },
  {
    methods: GET,
    template: '/api/session',
    owner: 'login',
    doc: 'who the console is signed in as',
  },
  {
    methods: GET,
    template: '/api/fleet',
    owner: 'api',
    doc: "every node's card, state and latency",
  },
  {
    methods: GET,
    template: '/api/fleet/stream',
    owner: 'api',
    doc: 'the fleet view, pushed (SSE)',
  },
  {
    methods: GET,
    template: '/api/tasks/stream',
    owner: 'api',
    doc: "the caller's tasks, pushed (SSE)",
  },
  { methods: GET, template: '/api/trace', owner: 'api', doc: 'a page of the call trace' },
  { methods: GET, template: '/api/trace/stream', owner: 'api', doc: 'the call trace, live (SSE)' },
  {
    methods: POST,
    template: '/api/local-invoke',
    owner: 'api',
    doc: 'the browser calls a fleet node, signed by the hub',
  },
  { methods: POST, template: '/api/hub', owner: 'api', doc: "one of the hub's capabilities" },
  {
    methods: POST,
    template: '/api/ask',
    owner: 'api',
    doc: 'a question answered across the fleet',
  },
  {
    methods: GET,
    template: '/api/model',
    owner: 'api',
    doc: 'whether a model is configured and up',
  },
  { methods: GET, template: '/api/mesh/tools', owner: 'api', doc: 'the mesh as tools for a model' },
  {
    methods: GET,
    template: '/api/mesh/me',
    owner: 'console-mesh',
    doc: "the caller's hub-held mesh presence: project, roster name, hub",
  },
  {
    methods: POST,
    template: '/api/mesh/send',
    owner: 'console-mesh',
    doc: 'a mesh message from the console, sent as the caller through the hub',
  },
  { methods: GET, template: '/api/negotiations', owner: 'api', doc: 'the stored negotiations' },
  { methods: GET, template: '/api/negotiations/{id}', owner: 'api', doc: 'one negotiation' },
  { methods: GET, template: '/', owner: 'console', doc: 'the console' },
  { methods: GET, template: '/index.html', owner: 'console', doc: 'the console' },
  {
    methods: GET,
    template: '/vendor/{file}',
    owner: 'console',
    doc: "the console's Preact and htm",
  },
  { methods: GET, template: '/{console file}', owner: 'console', doc: "the console's own files" },
];

/** What the console serves besides its page: its modules, styles and images. */
const CONSOLE_FILE = /^\/[A-Za-z0-9/_-]+\.(js|css|svg|png|ico|json)$/;

const exactOwner = new Map(
  HUB_ROUTE_TABLE.filter((r) => !r.template.includes('{')).map((r) => [r.template, r.owner]),
);
const templateOwners = HUB_ROUTE_TABLE.filter((r) => r.template.includes('{')).map(
  (r) =>
    [
      r.template === '/{console file}'
        ? CONSOLE_FILE
        : // An id the part itself checks (a negotiation id with a slash gets its coded refusal).
          new RegExp(`^${r.template.replace(/\{[^}]*\}/g, '.+')}$`),
      r.owner,
    ] as const,
);

/** Who answers a path: the table's owner, or undefined for the hub's node. */
export function hubOwnerOf(path: string): HubOwner | undefined {
  const exact = exactOwner.get(path);
  if (exact) return exact;
  for (const [re, owner] of templateOwners) if (re.test(path)) return owner;
  return undefined;
}

/** Every route template the hub serves (its own and its node's), for its metrics. */
export function hubRouteTemplates(): string[] {
  return [
    ...nodeRouteTemplates(),
    ...HUB_ROUTE_TABLE.map((r) => r.template).filter(
      (t) => t !== '/vendor/{file}' && t !== '/{console file}',
    ),
  ];
}

/** The console's file routes, labelled by kind rather than by file. */
export const CONSOLE_FILE_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/vendor\/[a-z]+\.mjs$/, '/vendor/{file}'],
  [CONSOLE_FILE, '/{console file}.$1'],
];

/** docs/routes.md, rendered from the two tables. */
/** The `/{tenant}/…` forms, served only for a configured tenant (`tenants`, `TENANTS`). */
const TENANT_ROUTES: readonly [methods: string, template: string, servedBy: string, doc: string][] =
  [
    [
      'as without',
      '`/{tenant}/message:send`, `/{tenant}/message:stream`',
      'A2A nodes',
      'HTTP+JSON acting in the tenant (lib/node/tenants.ts)',
    ],
    [
      'as without',
      '`/{tenant}/tasks…`, `/{tenant}/extendedAgentCard`',
      'A2A nodes',
      'HTTP+JSON acting in the tenant',
    ],
    [
      'GET',
      '`/{tenant}/.well-known/agent-card.json`',
      'A2A nodes',
      "the tenant's card: its 1.0 interfaces alone, signed like the main card",
    ],
    [
      'as without',
      '`/{tenant}/api/…`',
      'hub',
      "the console's API acting in the tenant (hub/http/tenant-paths.ts)",
    ],
    [
      'as without',
      '`/{tenant}/mcp`',
      'hub',
      'MCP in the tenant; an OAuth resource of its own (`<origin>/{tenant}/mcp`)',
    ],
    [
      'GET',
      '`/.well-known/oauth-protected-resource/{tenant}/mcp`',
      'hub',
      "that resource's protected-resource metadata (RFC 9728)",
    ],
    [
      'GET',
      '`/{tenant}/.well-known/ai-catalog.json`',
      'hub',
      "the tenant's AI Catalog: the members serving it",
    ],
    ['as untenanted', '`/{tenant}/ard/…`', 'hub', 'ARD list and search in the tenant'],
  ];

export function renderRouteDocs(): string {
  const node = NODE_ROUTE_TABLE.flatMap((r) =>
    (r.templates ?? [r.path]).map(
      (t) =>
        `| ${methodsOf(r, t).join(', ')} | \`${t}\` | ${r.when === 'a2a' ? 'A2A nodes' : r.when === 'identity' ? 'nodes with keys' : 'every node'} | ${describeRoute(r, t)} |`,
    ),
  );
  const hub = HUB_ROUTE_TABLE.map(
    (r) => `| ${r.methods.join(', ')} | \`${r.template}\` | ${r.owner} | ${r.doc} |`,
  );
  return [
    '# Routes',
    '',
    'Rendered from the route tables (`lib/node/routes.ts`, `hub/http/routes.ts`) by',
    '`bun hub/cli/routes-doc.ts --write`; `test/route-tables.test.ts` fails when this file, the',
    'tables and what the servers serve disagree. Who may call each route: docs/security.md.',
    '',
    '## Every node',
    '',
    '| methods | route | served by | what |',
    '|---|---|---|---|',
    ...node,
    '',
    "## The hub (beside its own node's routes)",
    '',
    '| methods | route | part | what |',
    '|---|---|---|---|',
    ...hub,
    '',
    '## In a tenant (with `tenants` configured)',
    '',
    '| methods | route | served by | what |',
    '|---|---|---|---|',
    ...TENANT_ROUTES.map((r) => `| ${r.join(' | ')} |`),
    '',
  ].join('\n');
}
