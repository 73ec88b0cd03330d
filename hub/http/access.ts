/**
 * @module hub/http/access — the hub's one access policy, applied to every request before any piece of
 * the hub sees it (A2A, `/api/*` with the trace, the mesh's routes and WebSocket, `/peer/*`, the
 * console). Browser boundary first: the Host must be one of the hub's own names (DNS rebinding),
 * `Sec-Fetch-Site: cross-site` is refused, a state-changing request or a WebSocket upgrade that
 * carries an Origin must carry one of the hub's own origins (configured, never derived from Host),
 * and POST bodies must be JSON. Then authentication: a bearer token (the token book, with
 * MESH_TOKEN as the token `mesh`) or a console session (its cookie and, in `X-Lume-Key`, its page
 * key). docs/security.md lists each surface.
 */

import { ANONYMOUS, isAuthenticated, type Principal } from '../../lib/auth/principal.ts';
import {
  bearerOf,
  bearerPrincipal,
  isLoopbackHost,
  type AnonymousAccess,
  type AuthLog,
  type AuthOutcome,
} from '../../lib/auth/access.ts';
import type { OidcVerifier } from '../../lib/auth/oidc/verifier.ts';
import { mayRead, mayWrite } from '../../lib/auth/scopes.ts';
import type { TokenBook } from '../../lib/auth/tokens.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { fail, ok } from '../../lib/errors/result.ts';
import { mcpResource, PROTECTED_RESOURCE_PATH } from './resource-metadata.ts';
import { cookieValues, sessionCookieName, sessionKeyOf, SessionTable } from './sessions.ts';

export interface HubAccessOptions {
  /** The hub's name (part of its session cookie's name). */
  name?: string;
  /** The address the hub binds. */
  host: string;
  /** HUB_PUBLIC_ORIGIN: the origins the console is served from besides the loopback ones. */
  publicOrigins?: string[];
  /** Bearer tokens (DATA_DIR/keys/tokens.json, with MESH_TOKEN folded in as `mesh`). */
  tokens?: TokenBook;
  /** HUB_REQUIRE_LOGIN: the console signs in even on loopback. Always on beyond loopback. */
  requireLogin?: boolean;
  /**
   * MESH_TOKEN is set: the operator asked for a hub that only token holders use, so it is treated
   * like HUB_REQUIRE_LOGIN, for every route (not only the mesh's).
   */
  meshToken?: boolean;
  sessions?: SessionTable;
  /** Trusted issuers' access tokens (auth.issuers, OIDC_ISSUER): their users are principals too. */
  oidc?: OidcVerifier;
  /** Where refused issuer tokens are logged (their code, never the token). */
  log?: AuthLog;
}

/** What a piece of the hub learns about an admitted request. */
export interface Admitted {
  caller: Principal;
  /** A navigation from another site to the console or its sign-in: it gets the sign-in page. */
  crossSiteNavigation?: boolean;
}

/** Paths anyone may read from anywhere: the card (served with `Access-Control-Allow-Origin: *`) and liveness. */
const PUBLIC_READS = new Set([
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/.well-known/jwks.json',
  PROTECTED_RESOURCE_PATH,
  `${PROTECTED_RESOURCE_PATH}/mcp`,
  '/health',
  '/healthz',
  '/readyz',
  '/v1/meta',
]);
/** Pages a link on another site may open: they answer the sign-in page, nothing else. */
const SIGN_IN_PAGES = new Set(['/', '/index.html', '/login']);
/** Mesh paths that need a principal whenever the mesh is protected. */
const MESH_PROTECTED = /^\/(?:v1\/history|v1\/presence|v1\/watch|api\/projects\.[a-z]+)$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const JSON_TYPES = new Set(['application/json', 'application/a2a+json']);
/** The sign-in form is the one POST that is not JSON: a plain HTML form keeps the token out of scripts. */
const FORM_PATHS = new Set(['/login', '/logout', '/login/oidc']);
/**
 * The issuer sends the browser back here from its own site: a navigation from another site is let
 * through (the pending sign-in's cookie proves the browser started it: hub/http/oidc-login.ts).
 */
const ISSUER_CALLBACK = '/login/oidc/callback';
/** The A2A routes answer their own refusals in their protocol's shapes (the node applies the policy). */
const isA2APath = (path: string) =>
  path === '/a2a' ||
  path === '/tasks' ||
  path.startsWith('/tasks/') ||
  path.startsWith('/message:') ||
  path === '/extendedAgentCard';

/**
 * POSTs that only read: an MCP request (its tools check scopes one by one), the sign-out, and an
 * Ask Agent question (it runs read-only capabilities only).
 */
const isReadPost = (path: string) => path === '/mcp' || path === '/logout' || path === '/api/ask';

const refusal = (code: string, message: string, headers: Record<string, string> = {}) =>
  Response.json(
    { ok: false, error: { code, message } },
    { status: statusOf(code), headers: { 'cache-control': 'no-store', ...headers } },
  );

export interface HubAccess {
  /** Fixes the port the default origins and Host names use (known once the hub is bound). */
  bind(port: number): void;
  /** The refusal of a request, or who it speaks for. */
  /** `tenant`: the tenant a `/{tenant}/…` request was taken out of (its `/mcp` is its own resource). */
  admit(req: Request, tenant?: string): Promise<Response | Admitted>;
  /** Bearer token, then session cookie: the hub node authenticates A2A requests with this too. */
  authenticate(req: Request): AuthOutcome | Promise<AuthOutcome>;
  /** The trusted issuers' URLs (none without auth.issuers). */
  readonly issuers: readonly string[];
  /** What an anonymous caller may do on the hub's A2A routes. */
  readonly anonymous: AnonymousAccess;
  readonly requireLogin: boolean;
  /** Whether the mesh's protected routes need a principal. */
  readonly meshProtected: boolean;
  readonly sessions: SessionTable;
  /** Whether session cookies must be `Secure` (every configured origin is https). */
  readonly secureCookies: boolean;
  /** The session cookie's name on this hub (`lume_<hub>_<port>`, known once bound). */
  cookieName(): string;
  /** The name of the live session a request's cookie names, its page key not checked (the console page). */
  sessionByCookie(req: Request): string | undefined;
  /** The hub's own origins (for tests and the start-up line). */
  origins(): string[];
}

export function createHubAccess(opts: HubAccessOptions): HubAccess {
  const loopback = isLoopbackHost(opts.host);
  const requireLogin = !!opts.requireLogin || !!opts.meshToken || !loopback;
  const sessions = opts.sessions ?? new SessionTable();
  // A session signed in with a token ends when that token is revoked.
  if (opts.tokens) sessions.tokens = opts.tokens;
  const hubName = opts.name ?? 'a2a';
  let cookieName = sessionCookieName(hubName, 0);
  const configured = (opts.publicOrigins ?? []).map((o) => new URL(o).origin);
  let origins = new Set<string>();
  let hosts = new Set<string>();

  function bind(port: number): void {
    const own = ['127.0.0.1', 'localhost', '[::1]'].map((h) => `http://${h}:${port}`);
    // A concrete bind address is the hub's own name too; 0.0.0.0 and :: are not names.
    if (!loopback && opts.host !== '0.0.0.0' && opts.host !== '::')
      own.push(`http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`);
    origins = new Set([...own, ...configured]);
    cookieName = sessionCookieName(hubName, port);
    hosts = new Set([...origins].map((o) => new URL(o).host.toLowerCase()));
  }

  function authenticate(req: Request, tenant?: string): AuthOutcome | Promise<AuthOutcome> {
    const token = bearerOf(req);
    if (token === null) return fail('UNAUTHENTICATED', 'The bearer token is not valid here');
    // On /mcp a token bound to the MCP resource itself (RFC 8707) is accepted too; on a tenant's
    // /mcp, one bound to that tenant's resource.
    const also = new URL(req.url).pathname === '/mcp' ? [mcpResource(req, tenant)] : [];
    if (token !== undefined) return bearerPrincipal(token, opts.tokens, opts.oidc, opts.log, also);
    // The cookie alone speaks for nobody: the page key must come with it (hub/http/sessions.ts).
    const key = sessionKeyOf(req);
    if (key !== null)
      for (const secret of cookieValues(req, cookieName)) {
        const s = sessions.find(secret, key);
        if (s) return ok(sessionPrincipal(s, opts.tokens));
      }
    return ok(ANONYMOUS);
  }

  function sessionByCookie(req: Request): string | undefined {
    for (const secret of cookieValues(req, cookieName)) {
      const name = sessions.lookup(secret, undefined);
      if (name) return name;
    }
    return undefined;
  }

  async function admit(req: Request, tenant?: string): Promise<Response | Admitted> {
    const path = new URL(req.url).pathname;
    const boundary = boundaryRefusal(req, path, hosts, origins);
    if (boundary) return boundary;
    // 5. Who is asking. The A2A routes answer their own refusals in their protocol's shape.
    if (isA2APath(path)) return { caller: ANONYMOUS };
    const who = await authenticate(req, tenant);
    if (!who.ok)
      return who.error.code === 'ISSUER_UNAVAILABLE'
        ? refusal(who.error.code, who.error.message, { 'retry-after': '5' })
        : refusal('UNAUTHENTICATED', who.error.message, {
            'www-authenticate': 'Bearer realm="lume-a2a"',
          });
    const caller = who.result;
    // An issuer's user reads with any A2A scope and changes state only with a2a.write or a2a.exec;
    // a WebSocket (the mesh's: it sends messages) counts as changing state.
    const upgrade = (req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket';
    const changes = upgrade || (!SAFE_METHODS.has(req.method) && !isReadPost(path));
    if (!mayRead(caller) || (changes && !mayWrite(caller)))
      return refusal(
        'INSUFFICIENT_SCOPE',
        'the access token does not carry a scope this request needs',
      );
    if (!isAuthenticated(caller)) {
      if (MESH_PROTECTED.test(path) && requireLogin)
        return Response.json(
          { error: { code: 'unauthorized', message: 'missing or wrong bearer token' } },
          { status: statusOf('unauthorized') },
        );
      if (requireLogin && path.startsWith('/api/'))
        return refusal('UNAUTHENTICATED', 'sign in first (/login) or send a bearer token', {
          'www-authenticate': 'Bearer realm="lume-a2a"',
        });
    }
    return { caller };
  }

  return {
    bind,
    admit,
    authenticate,
    issuers: opts.oidc?.issuers.map((i) => i.issuer) ?? [],
    anonymous: requireLogin ? 'none' : 'read',
    requireLogin,
    meshProtected: requireLogin,
    sessions,
    secureCookies: configured.length > 0 && configured.every((o) => o.startsWith('https:')),
    cookieName: () => cookieName,
    sessionByCookie,
    origins: () => [...origins],
  };
}

/** Who a live session speaks for: an issuer's user (its token's scopes and tenants), or a session. */
function sessionPrincipal(
  s: { name: string; scopes?: readonly string[]; tenants?: readonly string[] },
  tokens: TokenBook | undefined,
): Principal {
  if (s.scopes)
    return {
      kind: 'user',
      name: s.name,
      scopes: s.scopes,
      ...(s.tenants ? { tenants: s.tenants } : {}),
    };
  // A session signed in with a token that names tenants is held to them as the token is.
  const tenants = tokens?.tenantsOf(s.name);
  return tenants ? { kind: 'session', name: s.name, tenants } : { kind: 'session', name: s.name };
}

/**
 * Steps 1 to 4 of `admit`, the browser's boundary: the Host the hub answers to, another site's
 * requests, another origin's writes and upgrades, and non-JSON bodies. Undefined lets it through.
 */
function boundaryRefusal(
  req: Request,
  path: string,
  hosts: Set<string>,
  origins: Set<string>,
): Response | Admitted | undefined {
  // 1. DNS rebinding: a page on a name that resolves here still sends its own name as Host.
  const host = req.headers.get('host')?.toLowerCase();
  if (host !== undefined && !hosts.has(host))
    return refusal(
      'FORBIDDEN_HOST',
      `this hub answers to ${[...hosts].join(', ')}; set HUB_PUBLIC_ORIGIN to serve another name`,
    );
  // 2. Browsers say where a request comes from; another site gets nothing but the public reads,
  // and a link from there to the console opens the sign-in page (a 403 would be a dead end).
  if (req.headers.get('sec-fetch-site') === 'cross-site' && !PUBLIC_READS.has(path)) {
    const navigation = req.method === 'GET' && req.headers.get('sec-fetch-mode') === 'navigate';
    if (navigation && path === ISSUER_CALLBACK) return { caller: ANONYMOUS };
    if ((req.method === 'GET' || req.method === 'HEAD') && SIGN_IN_PAGES.has(path))
      return { caller: ANONYMOUS, crossSiteNavigation: true };
    return refusal('FORBIDDEN_CROSS_SITE', 'requests from another site are refused');
  }
  // 3. Anything that changes state, and the WebSocket upgrade, from a browser must come from the hub's own pages.
  const upgrade = (req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket';
  const origin = req.headers.get('origin');
  if ((!SAFE_METHODS.has(req.method) || upgrade) && origin !== null && !origins.has(origin))
    return refusal('FORBIDDEN_ORIGIN', 'requests from another origin may only read');
  // 4. A POST body is JSON: a form or text/plain body (what a page elsewhere can send without asking) is refused.
  if (!SAFE_METHODS.has(req.method) && hasBody(req) && !FORM_PATHS.has(path)) {
    const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!JSON_TYPES.has(type))
      return refusal(
        'NOT_JSON',
        `send application/json, not ${type.slice(0, 64) || 'a body without a Content-Type'}`,
      );
  }
  return undefined;
}

/** Whether a request carries a body (a declared length above zero, or a chunked one). */
function hasBody(req: Request): boolean {
  const length = req.headers.get('content-length');
  if (length !== null) return length.trim() !== '0';
  return req.headers.has('transfer-encoding');
}
