/**
 * @module lib/node/routes — the node's route table, the one list of what a node serves: the node
 * mounts its routes from it (lib/node/create-node.ts), its metrics label requests with its
 * templates, the hub's table includes it, and docs/routes.md is rendered from it. The HTTP+JSON
 * binding's own routes come from that binding (lib/a2a/rest/binding.ts `REST_ROUTES`).
 */

import { REST_ROUTES } from '../a2a/rest/binding.ts';

/** The handlers a node has; the table names one per route. */
export type NodeHandler =
  | 'card'
  | 'jwks'
  | 'jsonRpc'
  | 'rest'
  | 'peerInvoke'
  | 'peerRelay'
  | 'peerIdentity'
  | 'healthz'
  | 'readyz'
  | 'health'
  | 'capabilities'
  | 'metrics'
  | 'mcp';

export interface NodeRoute {
  /** `ALL`: the handler answers every method (and refuses the ones it does not serve). */
  method: 'GET' | 'POST' | 'ALL';
  /** The path as mounted (Elysia's syntax: `*` is a wildcard, `:name` a parameter). */
  path: string;
  handler: NodeHandler;
  /**
   * `a2a`: mounted only when the node speaks A2A; `identity`: only when it publishes its keys;
   * `mcp`: only when it serves MCP.
   */
  when?: 'a2a' | 'identity' | 'mcp';
  /** The route templates of the paths it serves, for metrics and docs; default: the path itself. */
  templates?: readonly string[];
  doc: string;
}

const rest = (match: (template: string) => boolean) =>
  REST_ROUTES.filter((r) => match(r.template)).map((r) => r.template);

export const NODE_ROUTE_TABLE: readonly NodeRoute[] = [
  {
    method: 'GET',
    path: '/.well-known/agent-card.json',
    handler: 'card',
    when: 'a2a',
    doc: 'the agent card, generated from the catalog (A2A 1.0 and 0.3 fields)',
  },
  {
    method: 'GET',
    path: '/.well-known/agent.json',
    handler: 'card',
    when: 'a2a',
    doc: 'the agent card where clients before A2A 0.3 look',
  },
  {
    method: 'GET',
    path: '/.well-known/jwks.json',
    handler: 'jwks',
    when: 'a2a',
    doc: "the public keys the card's signature names (RFC 7517 JWK Set)",
  },
  {
    method: 'POST',
    path: '/a2a',
    handler: 'jsonRpc',
    when: 'a2a',
    doc: 'A2A JSON-RPC 2.0, v1.0 and v0.3 method names',
  },
  {
    // Elysia reads `/message:send` as a parameter route (`/message…`): the binding decides.
    method: 'ALL',
    path: '/message:verb',
    handler: 'rest',
    when: 'a2a',
    templates: rest((t) => t.startsWith('/message:')),
    doc: 'A2A HTTP+JSON: send and stream a message',
  },
  {
    method: 'ALL',
    path: '/tasks',
    handler: 'rest',
    when: 'a2a',
    templates: rest((t) => t === '/tasks'),
    doc: "A2A HTTP+JSON: the caller's tasks",
  },
  {
    method: 'ALL',
    path: '/tasks/*',
    handler: 'rest',
    when: 'a2a',
    templates: rest((t) => t.startsWith('/tasks/')),
    doc: 'A2A HTTP+JSON: one task, its cancel, subscription and push configs',
  },
  {
    method: 'ALL',
    path: '/extendedAgentCard',
    handler: 'rest',
    when: 'a2a',
    templates: rest((t) => t === '/extendedAgentCard'),
    doc: 'A2A HTTP+JSON: the extended agent card (this kit has none)',
  },
  {
    method: 'POST',
    path: '/peer/invoke',
    handler: 'peerInvoke',
    doc: 'a signed fleet call of one capability',
  },
  {
    method: 'POST',
    path: '/peer/relay',
    handler: 'peerRelay',
    doc: 'a signed call forwarded to another node',
  },
  {
    method: 'GET',
    path: '/peer/identity',
    handler: 'peerIdentity',
    when: 'identity',
    doc: "the node's public identity: name, signing mode and ring keys",
  },
  { method: 'GET', path: '/healthz', handler: 'healthz', doc: 'liveness' },
  { method: 'GET', path: '/readyz', handler: 'readyz', doc: 'readiness, with its self-checks' },
  {
    method: 'GET',
    path: '/health',
    handler: 'health',
    doc: 'the older liveness, with a task count',
  },
  {
    method: 'GET',
    path: '/capabilities',
    handler: 'capabilities',
    doc: "the catalog's capability descriptors",
  },
  { method: 'GET', path: '/metrics', handler: 'metrics', doc: 'Prometheus metrics' },
  {
    method: 'ALL',
    path: '/mcp',
    handler: 'mcp',
    when: 'mcp',
    doc: 'MCP Streamable HTTP (POST, GET, DELETE), when the node serves MCP',
  },
];

/** Every route template a node may serve (all its routes, whatever it mounts). */
export function nodeRouteTemplates(): string[] {
  return NODE_ROUTE_TABLE.flatMap((r) => r.templates ?? [r.path]);
}

/** The methods of a template, for the docs: the binding's own for REST routes, else the route's. */
export function methodsOf(route: NodeRoute, template: string): readonly string[] {
  if (route.handler === 'rest')
    return REST_ROUTES.find((r) => r.template === template)?.methods ?? [];
  return [route.method];
}

/** What a template serves, for the docs: the binding's operations for REST routes, else the route's doc. */
export function describeRoute(route: NodeRoute, template: string): string {
  const ops = route.handler === 'rest' && REST_ROUTES.find((r) => r.template === template)?.ops;
  return ops ? `A2A HTTP+JSON: ${ops.join(', ')}` : route.doc;
}
