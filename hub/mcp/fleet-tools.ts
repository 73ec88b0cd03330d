/**
 * @module hub/mcp/fleet-tools — every fleet capability as an MCP tool: read from the fleet catalog
 * (`resolve.catalog`, or each node's /capabilities when it does not answer) plus the hub's own
 * capabilities no node offers; each call goes through `fleet.invoke` (signed as the hub, on behalf
 * of the MCP caller, traced). A capability that changes state or runs work is listed and run only
 * for an authenticated caller, and as an MCP task for a client that takes them (the tasks
 * extension); read-only ones carry `readOnlyHint` and answer at once.
 */

import { mayRun, scopeFor } from '../../lib/auth/scopes.ts';
import { isAuthenticated, ownerKey, type Principal } from '../../lib/auth/principal.ts';
import type { Catalog } from '../../lib/catalog/catalog.ts';
import type { FleetInvoker } from '../../lib/fleet/invoke.ts';
import { errorResult, okResult, type McpTool, type ToolResult } from '../../lib/mcp/protocol.ts';
import type { TaskOffer } from '../../lib/mcp/tasks.ts';
import { childContext, currentTrace, withTrace } from '../../lib/telemetry/trace-context.ts';
import type { CatalogTool } from '../workbench/ask-planner.ts';
import { schemaOf, toolNames } from './tool-names.ts';

export interface FleetToolsDeps {
  invoker: FleetInvoker;
  /** The hub's name and its own catalog (its capabilities run in process, calling nodes through fleet.invoke). */
  hub: { name: string; catalog: Catalog };
  /** The fleet's node names: a catalog entry for anything else is left out. */
  nodeNames: () => string[];
  /** The fleet catalog (hub/workbench/ask-catalog.ts `loadCatalog`). */
  catalog: () => Promise<CatalogTool[] | { error: string }>;
  /** How long a read catalog is reused, in ms. */
  ttlMs?: number;
  now?: () => number;
}

/** Where a tool result names the trace record of its call. */
const TRACE_META = 'dev.lume-a2a/trace';

/** The hub capability a tool of its own replaces (`delegate`). */
const REPLACED = new Set(['task.delegate']);

interface Entry {
  tool: McpTool;
  node: string;
  capability: string;
  readOnly: boolean;
  /** Run by the hub's own catalog rather than fleet.invoke. */
  own: boolean;
}

export const UNAUTHENTICATED_TOOL = (name: string) =>
  errorResult(
    'UNAUTHENTICATED',
    `${name} changes state or runs work: connect with a bearer token (Authorization header, or LUME_TOKEN for bun run mcp)`,
  );

export function createFleetTools(deps: FleetToolsDeps) {
  const now = deps.now ?? Date.now;
  const ttl = deps.ttlMs ?? 5_000;
  let cached: { at: number; entries: Map<string, Entry> } | undefined;

  const entryOf = (t: CatalogTool, own: boolean, name: string): Entry => ({
    tool: {
      name,
      title: `${t.name} (${t.node})`,
      description: `${t.description} [${t.node} ${t.id}${t.readOnly ? ', read-only' : ', changes state or runs work'}]`,
      inputSchema: schemaOf(t.args),
      annotations: {
        title: `${t.name} (${t.node})`,
        readOnlyHint: t.readOnly,
        ...(t.readOnly ? {} : { destructiveHint: false }),
        openWorldHint: false,
      },
    },
    node: t.node,
    capability: t.id,
    readOnly: t.readOnly,
    own,
  });

  async function entries(): Promise<Map<string, Entry>> {
    if (cached && now() - cached.at < ttl) return cached.entries;
    const read = await deps.catalog();
    const members = new Set(deps.nodeNames());
    const nodes = Array.isArray(read) ? read.filter((t) => members.has(t.node)) : [];
    const offered = new Set(nodes.map((t) => t.id));
    const own = deps.hub.catalog
      .descriptors()
      .filter((d) => !REPLACED.has(d.id) && !offered.has(d.id))
      .map((d) => ({ ...d, node: deps.hub.name }));
    const all = [...nodes.map((t) => ({ t, own: false })), ...own.map((t) => ({ t, own: true }))];
    const names = toolNames(all.map(({ t }) => ({ node: t.node, capability: t.id })));
    const map = new Map<string, Entry>();
    for (const { t, own: isOwn } of all) {
      const name = names.get(`${t.node}/${t.id}`)!;
      // A capability the catalog lists twice is one tool.
      if (!map.has(name)) map.set(name, entryOf(t, isOwn, name));
    }
    // A catalog that failed is not kept: the next listing asks again.
    cached = Array.isArray(read) ? { at: now(), entries: map } : undefined;
    return map;
  }

  async function run(
    e: Entry,
    args: Record<string, unknown>,
    caller: Principal,
  ): Promise<ToolResult> {
    const r = await withTrace(childContext(currentTrace()), () =>
      e.own
        ? deps.hub.catalog.invoke(e.capability, args, undefined, { caller })
        : deps.invoker.invoke(e.node, e.capability, args, undefined, {
            onBehalfOf: ownerKey(caller),
          }),
    );
    const out = r.ok
      ? okResult(r.result)
      : errorResult(r.error.code, r.error.message, r.error.field);
    // The trace record the call left (its id on the console's Agent Process page).
    const record = 'traceId' in r ? r.traceId : undefined;
    return typeof record === 'number' ? { ...out, _meta: { [TRACE_META]: { record } } } : out;
  }

  return {
    /** Drops the cached listing: the fleet changed, the next listing reads the catalog again. */
    invalidate(): void {
      cached = undefined;
    },
    async list(caller: Principal): Promise<McpTool[]> {
      const all = [...(await entries()).values()];
      return all
        .filter(
          (e) =>
            (e.readOnly || isAuthenticated(caller)) &&
            mayRun(caller, { id: e.capability, readOnly: e.readOnly }),
        )
        .map((e) => e.tool);
    },
    /** undefined: no fleet tool of that name. */
    async call(
      name: string,
      args: Record<string, unknown>,
      caller: Principal,
    ): Promise<ToolResult | TaskOffer | undefined> {
      const e = (await entries()).get(name);
      if (!e) return undefined;
      if (!e.readOnly && !isAuthenticated(caller)) return UNAUTHENTICATED_TOOL(name);
      if (!mayRun(caller, { id: e.capability, readOnly: e.readOnly }))
        return errorResult(
          'INSUFFICIENT_SCOPE',
          `${name} needs the scope ${scopeFor({ id: e.capability, readOnly: e.readOnly })}`,
        );
      return e.readOnly ? run(e, args, caller) : { task: () => run(e, args, caller) };
    },
  };
}
