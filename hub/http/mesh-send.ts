/**
 * @module hub/http/mesh-send — the console's mesh routes: `GET /api/mesh/me?project=` (the
 * identity of the caller's hub-held presence: project, roster name, hub) and
 * `POST /api/mesh/send` `{project, to?, text}` (a message from that presence, direct to `to` or to
 * the whole project; hub/mesh/console-presence.ts holds it). The access policy has admitted the
 * request (own Host and Origin, JSON body); sending needs a session or a bearer token, and an
 * anonymous visitor is told to sign in (CONSOLE_MESH_SIGN_IN).
 */

import { isPlainObject } from '../../lib/json/guards.ts';
import { ANONYMOUS, type Principal } from '../../lib/auth/principal.ts';
import { parseJsonBody, readBodyBytes } from '../../lib/body.ts';
import { statusOf } from '../../lib/errors/registry.ts';
import { presentable, type ConsolePresences } from '../mesh/console-presence.ts';

/** Largest `POST /api/mesh/send` body (docs/limits.md). */
const MESH_SEND_MAX_BODY = 32 * 1024;
/** Longest text sent from the panel, in characters. */
const MESH_SEND_MAX_TEXT = 8_000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const json = (body: unknown, status = 200) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
const refuse = (code: string, message: string) =>
  json({ ok: false, error: { code, message } }, statusOf(code, 502));

export function createMeshSendRoutes(deps: { presences: ConsolePresences; hubName: string }) {
  async function send(req: Request, caller: Principal): Promise<Response> {
    if (!presentable(caller))
      return refuse(
        'CONSOLE_MESH_SIGN_IN',
        'sign in to send: the hub holds a mesh presence only for a signed-in principal',
      );
    const bytes = await readBodyBytes(req, MESH_SEND_MAX_BODY).catch(() => undefined);
    if (!bytes) return refuse('TOO_LARGE', `body must be under ${MESH_SEND_MAX_BODY} bytes`);
    const parsed = parseJsonBody(new TextDecoder().decode(bytes));
    if (!parsed.ok)
      return parsed.error.code === 'BAD_JSON'
        ? refuse('BAD_REQUEST', 'body is not JSON')
        : refuse(parsed.error.code, parsed.error.message);
    const b = parsed.result as { project?: unknown; to?: unknown; text?: unknown } | null;
    if (!isPlainObject(b)) return refuse('BAD_REQUEST', 'body must be a JSON object');
    if (typeof b.project !== 'string' || !NAME.test(b.project))
      return refuse('BAD_REQUEST', 'project must be a project name');
    if (b.to !== undefined && (typeof b.to !== 'string' || !NAME.test(b.to)))
      return refuse('BAD_REQUEST', 'to must be a roster name (or absent: the whole project)');
    if (typeof b.text !== 'string' || !b.text.trim() || b.text.length > MESH_SEND_MAX_TEXT)
      return refuse(
        'BAD_REQUEST',
        `text must be a non-empty string of at most ${MESH_SEND_MAX_TEXT} characters`,
      );
    const r = await deps.presences.send(caller, b.project, {
      ...(b.to ? { to: b.to } : {}),
      text: b.text,
    });
    if (!r.ok) return refuse(r.error.code, r.error.message);
    return json({
      ok: true,
      result: {
        name: r.result.name,
        messageRef: r.result.message.messageRef,
        recipients: r.result.recipients,
      },
    });
  }

  async function me(url: URL, caller: Principal): Promise<Response> {
    const project = url.searchParams.get('project') ?? '';
    if (!NAME.test(project)) return refuse('BAD_QUERY', 'project must be a project name');
    const asked = presentable(caller) ? caller.name : undefined;
    const held = await deps.presences.nameOf(caller, project);
    return json({
      project,
      hub: deps.hubName,
      signedIn: asked !== undefined,
      // The name the presence has once held; before the first send, the one it asks for.
      name: held ?? asked ?? null,
      present: held !== undefined,
    });
  }

  return {
    fetch(req: Request, caller: Principal = ANONYMOUS): Promise<Response> | undefined {
      const url = new URL(req.url);
      if (url.pathname === '/api/mesh/send')
        return req.method === 'POST'
          ? send(req, caller)
          : Promise.resolve(refuse('METHOD_NOT_ALLOWED', 'POST only'));
      if (url.pathname === '/api/mesh/me')
        return req.method === 'GET'
          ? me(url, caller)
          : Promise.resolve(refuse('METHOD_NOT_ALLOWED', 'GET only'));
      return undefined;
    },
  };
}
