/**
 * @module hub/fleet/discovery — the hub's discovery routes over HTTP: the fleet's AI Catalog
 * (`GET /.well-known/ai-catalog.json`, `application/ai-catalog+json`) and ARD's search
 * (`POST /ard/search`) and browsing (`GET /ard/agents`), all made from the members' cards as the
 * hub reads them now. A hub that lists its fleet to authenticated callers only refuses the rest
 * with `UNAUTHENTICATED`; a refused ARD query is ARD's `INVALID_ARGUMENT` (400) in ARD's error
 * shape (`errorCode`, `message`) beside this project's (`error: {code, message, field}`). A caller
 * in a tenant (`/{tenant}/…`, hub/http/tenant-paths.ts) gets that tenant's catalog and search.
 */

import { isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import type { AnonymousAccess } from '../../lib/auth/access.ts';
import { readBodyBytes } from '../../lib/body.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import {
  AI_CATALOG_MEDIA_TYPE,
  AI_CATALOG_PATH,
  ARD_BASE_PATH,
  aiCatalog,
  type CatalogScope,
  indexMembers,
  parseCatalogQuery,
} from './ai-catalog.ts';
import { listAgents } from './ard-list.ts';
import { ARD_LIMITS, parseSearch, search, type Refusal } from './ard-search.ts';
import type { MemberCard } from './cards.ts';

export interface DiscoveryDeps {
  cards: () => Promise<MemberCard[]>;
  baseUrl: () => string;
  hubName: string;
  anonymous: AnonymousAccess;
}

const json = (body: unknown, status = 200, type = 'application/json') =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': type, 'cache-control': 'no-store' },
  });
const refuse = (code: string, message: string) =>
  json({ ok: false, error: { code, message } }, statusOf(code));
const invalid = (r: Refusal) =>
  json(
    {
      errorCode: 'INVALID_ARGUMENT',
      message: r.refused,
      ok: false,
      error: {
        code: 'INVALID_ARGUMENT',
        message: r.refused,
        ...(r.field ? { field: r.field } : {}),
      },
    },
    statusOf('INVALID_ARGUMENT'),
  );

const SEARCH_PATH = `${ARD_BASE_PATH}/search`;
const LIST_PATH = `${ARD_BASE_PATH}/agents`;

export function createDiscovery(deps: DiscoveryDeps) {
  async function ardSearch(req: Request, scope: CatalogScope): Promise<Response> {
    const bytes = await readBodyBytes(req, ARD_LIMITS.bodyBytes);
    if (!bytes)
      return invalid({ refused: `the query is larger than ${ARD_LIMITS.bodyBytes} bytes` });
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return invalid({ refused: 'the body is not JSON' });
    }
    const ask = parseSearch(body);
    if ('refused' in ask) return invalid(ask);
    const entries = indexMembers(await deps.cards(), deps.baseUrl(), scope);
    const at = `${deps.baseUrl()}${scope.tenant !== undefined ? `/${scope.tenant}` : ''}`;
    return json(search(entries, ask, `${at}${ARD_BASE_PATH}`));
  }

  async function route(req: Request, path: string, scope: CatalogScope): Promise<Response> {
    const get = req.method === 'GET' || req.method === 'HEAD';
    if (path === SEARCH_PATH)
      return req.method === 'POST'
        ? ardSearch(req, scope)
        : refuse('METHOD_NOT_ALLOWED', 'POST only');
    if (!get) return refuse('METHOD_NOT_ALLOWED', 'GET only');
    const params = new URL(req.url).searchParams;
    if (path === LIST_PATH) {
      const entries = indexMembers(await deps.cards(), deps.baseUrl(), scope).map((e) => e.entry);
      const page = listAgents(entries, params);
      return 'refused' in page ? invalid(page) : json(page);
    }
    const q = parseCatalogQuery(params);
    if (typeof q === 'string') return refuse('BAD_QUERY', q);
    const catalog = aiCatalog(await deps.cards(), deps.baseUrl(), deps.hubName, q, scope);
    return json(catalog, 200, AI_CATALOG_MEDIA_TYPE);
  }

  return {
    /** The answer for a discovery route; undefined for any other path. */
    fetch(req: Request, caller: Principal): Promise<Response> | undefined {
      const path = new URL(req.url).pathname;
      if (path !== AI_CATALOG_PATH && path !== SEARCH_PATH && path !== LIST_PATH) return undefined;
      if (deps.anonymous === 'none' && !isAuthenticated(caller))
        return Promise.resolve(
          refuse(
            'UNAUTHENTICATED',
            'this hub lists its fleet to authenticated callers: send a bearer token',
          ),
        );
      return route(req, path, caller.tenant !== undefined ? { tenant: caller.tenant } : {});
    },
  };
}
