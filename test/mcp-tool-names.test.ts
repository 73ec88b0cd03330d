/**
 * The names the hub's MCP tools take, as the official MCP client (`@modelcontextprotocol/sdk`)
 * lists them from a server over the fleet tools of hub/mcp/fleet-tools.ts: the node's prefix is
 * not repeated, names fit what clients accept (64 characters of [a-zA-Z0-9_-]), two capabilities
 * that would make one name each get their own (a deterministic suffix), and the names do not
 * depend on the order the catalog lists them in (so they hold across restarts).
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ANONYMOUS } from '../lib/auth/principal.ts';
import type { Catalog } from '../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../lib/fleet/invoke.ts';
import { createMcpHttp } from '../lib/mcp/http.ts';
import { MCP_LIMITS } from '../lib/mcp/limits.ts';
import { createMcpServer } from '../lib/mcp/server.ts';
import { McpSessions } from '../lib/mcp/sessions.ts';
import { createFleetTools } from '../hub/mcp/fleet-tools.ts';
import type { CatalogTool } from '../hub/workbench/ask-planner.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const LONG = `very.${'long'.repeat(20)}`;
/** A fleet catalog with the shapes that matter: prefixed ids, a collision, two over-long names. */
const CATALOG: [string, string][] = [
  ['crm', 'crm.industries'],
  ['crm', 'industries'], // would also be crm_industries
  ['lan', 'lan.hosts'],
  ['resolve', 'resolve.catalog'],
  ['resolve', 'exec.submit'],
  ['scanner', 'sector.movement'],
  ['tsm-hub', 'tsm.health'],
  ['scanner', `${LONG}.one`],
  ['scanner', `${LONG}.two`],
];
const tool = ([node, id]: [string, string]): CatalogTool => ({
  node,
  id,
  name: id,
  description: `${id} on ${node}`,
  tags: [],
  keywords: [],
  examples: [],
  readOnly: true,
  args: {},
});

/** Invoked capabilities answer who they are, so a call shows which one a name reached. */
const invoker = {
  invoke: async (node: string, capability: string) => ({ ok: true, result: { node, capability } }),
} as unknown as FleetInvoker;

const servers: ReturnType<typeof Bun.serve>[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) s.stop(true);
});

/** A hub-like /mcp over a catalog listed in the given order; the official client connected to it. */
async function listed(order: [string, string][]) {
  const fleetTools = createFleetTools({
    invoker,
    hub: { name: 'a2a', catalog: { descriptors: () => [] } as unknown as Catalog },
    nodeNames: () => [...new Set(order.map(([n]) => n))],
    catalog: async () => order.map(tool),
  });
  const server = createMcpServer({
    info: { name: 't', version: '0' },
    tools: {
      list: (ctx) => fleetTools.list(ctx.caller),
      call: (name, args, ctx) => fleetTools.call(name, args, ctx.caller),
    },
    resources: { list: async () => [], read: async () => undefined },
    limits: MCP_LIMITS,
  });
  const http = createMcpHttp({
    server,
    sessions: new McpSessions(MCP_LIMITS),
    limits: MCP_LIMITS,
    allowedOrigin: () => false,
    anonymousAllowed: true,
  });
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => http.fetch(r, ANONYMOUS) });
  servers.push(s);
  const client = new Client({ name: 'lume-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${s.port}/`)));
  clients.push(client);
  return { client, names: (await client.listTools()).tools.map((t) => t.name) };
}

test('names: node and capability once each, unique, at most 64 of [a-zA-Z0-9_-], the same in any catalog order', async () => {
  const { client, names } = await listed(CATALOG);
  for (const name of ['crm_industries', 'lan_hosts', 'resolve_catalog', 'resolve_exec_submit'])
    expect(names).toContain(name);
  expect(names).toContain('scanner_sector_movement');
  expect(names).toContain('tsm-hub_health');
  expect(names.filter((n) => /^(crm_crm|lan_lan|resolve_resolve|tsm-hub_tsm)_/.test(n))).toEqual(
    [],
  );
  expect(names.length).toBe(CATALOG.length);
  expect(new Set(names).size).toBe(names.length);
  expect(names.filter((n) => !/^[a-zA-Z0-9_-]{1,64}$/.test(n))).toEqual([]);
  // The collision: the first in (node, capability) order keeps the name, the other a suffix.
  const suffixed = names.filter((n) => /^crm_industries_[0-9a-f]{6}$/.test(n));
  expect(suffixed.length).toBe(1);
  for (const [name, capability] of [
    ['crm_industries', 'crm.industries'],
    [suffixed[0]!, 'industries'],
  ])
    expect((await client.callTool({ name: name!, arguments: {} })).structuredContent).toEqual({
      node: 'crm',
      capability,
    });
  // Two long names cut at 64 stay apart.
  expect(names.filter((n) => n.startsWith('scanner_very_')).map((n) => n.length)).toEqual([64, 64]);
  // Another order (a restart, the fallback catalog) gives the same names.
  const again = await listed([...CATALOG].reverse());
  expect([...again.names].sort()).toEqual([...names].sort());
});
