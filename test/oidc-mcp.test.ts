/**
 * The hub's `/mcp` as an OAuth protected resource (the MCP authorization spec, RFC 9728, RFC 8707),
 * against a real OpenID provider (oidc-provider on a free loopback port): an anonymous request is
 * 401 with `WWW-Authenticate: Bearer resource_metadata=…`, the metadata names the issuer, and the
 * official MCP client (`@modelcontextprotocol/sdk`) with its client-credentials provider follows
 * them by itself: it obtains a token bound to the hub's /mcp resource and calls tools. A token for
 * another resource is refused; a token without a2a.write gets no state-changing tools.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { realNodeDefs, startFleet, type RunningFleet } from './support/fleet.ts';
import { startProvider, type TestClient, type TestProvider } from './support/oidc-provider.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a provider, a fleet, a busy machine

const HUB_AUD = 'urn:lume:hub';
const client = (id: string, scope: string): TestClient => ({
  id,
  secret: `${id}-secret-0123456789abcdef0123456789`,
  scope,
});
const HARNESS = client('harness', 'a2a.read a2a.write');
const READER = client('reader', 'a2a.read');
/** Resources the provider issues tokens for; the hub's /mcp joins once the hub listens. */
const resources = [HUB_AUD, 'urn:lume:elsewhere'];

let op: TestProvider;
let f: RunningFleet;
let mcpUrl: string;

beforeAll(async () => {
  op = await startProvider({ clients: [HARNESS, READER], resources });
  f = await startFleet(await realNodeDefs(['scanner']), {
    hub: {
      requireLogin: true,
      tenants: ['acme'],
      oidc: createOidcVerifier([{ issuer: op.issuer, audience: HUB_AUD }]),
    },
  });
  mcpUrl = `${f.hubUrl}/mcp`;
  resources.push(mcpUrl, `${f.hubUrl}/acme/mcp`);
});
afterAll(async () => {
  await f.stop();
  await op.stop();
});

const connect = async (c: TestClient, url = mcpUrl) => {
  const mcp = new Client({ name: 'oauth-harness', version: '1.0.0' });
  const authProvider = new ClientCredentialsProvider({
    clientId: c.id,
    clientSecret: c.secret,
    scope: c.scope,
    expectedIssuer: op.issuer,
  });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
  return { mcp, authProvider };
};

describe('MCP authorization', () => {
  test('anonymous /mcp is 401 naming the resource metadata, which names the issuer', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(url).toBe(`${f.hubUrl}/.well-known/oauth-protected-resource/mcp`);
    const meta = (await (await fetch(url!)).json()) as any;
    expect(meta.resource).toBe(mcpUrl);
    expect(meta.authorization_servers).toEqual([op.issuer]);
    expect(meta.scopes_supported).toContain('a2a.write');
  });

  test('the official MCP client signs in through the metadata by itself and calls a tool', async () => {
    const { mcp, authProvider } = await connect(HARNESS);
    // The token it obtained is bound to this hub's /mcp (RFC 8707).
    const token = authProvider.tokens()!.access_token;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims.aud).toBe(mcpUrl);
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('delegate');
    const r: any = await mcp.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    console.log(
      `MCP client (@modelcontextprotocol/sdk ClientCredentialsProvider): 401 → resource metadata → ${op.issuer} → token with aud ${claims.aud} → ${tools.length} tools, scanner_sector_movement answered`,
    );
    await mcp.close();
  });

  test("a tenant's /mcp is a resource of its own: its metadata, its audience, and only there", async () => {
    const acmeUrl = `${f.hubUrl}/acme/mcp`;
    const anon = await fetch(acmeUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const url = /resource_metadata="([^"]+)"/.exec(anon.headers.get('www-authenticate') ?? '')?.[1];
    expect([anon.status, url]).toEqual([
      401,
      `${f.hubUrl}/.well-known/oauth-protected-resource/acme/mcp`,
    ]);
    expect(((await (await fetch(url!)).json()) as any).resource).toBe(acmeUrl);
    const { mcp, authProvider } = await connect(HARNESS, acmeUrl);
    const token = authProvider.tokens()!.access_token;
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).aud).toBe(acmeUrl);
    const r: any = await mcp.callTool({ name: 'scanner_sector_movement', arguments: {} });
    expect(r.isError).toBeFalsy();
    await mcp.close();
    // Each resource's token is accepted at its own /mcp only.
    const list = async (at: string, aud: string) =>
      (
        await fetch(at, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${await op.token(HARNESS, aud)}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
      ).status;
    expect([await list(acmeUrl, mcpUrl), await list(mcpUrl, acmeUrl)]).toEqual([401, 401]);
    expect(
      (await fetch(`${f.hubUrl}/.well-known/oauth-protected-resource/initech/mcp`)).status,
    ).toBe(404);
  });

  test('a2a.read alone lists no state-changing tools and may not delegate', async () => {
    const { mcp } = await connect(READER);
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain('delegate');
    // The mesh: it reads the roster, but sending is a state change.
    expect(tools).toContain('a2a_peers');
    expect(tools).not.toContain('a2a_message');
    const r: any = await mcp.callTool({ name: 'delegate', arguments: { recipe: 'x' } });
    expect(JSON.stringify(r)).toContain('INSUFFICIENT_SCOPE');
    const sent: any = await mcp.callTool({
      name: 'a2a_message',
      arguments: { target: { type: 'project' }, text: 'from a reader' },
    });
    expect([sent.isError, JSON.stringify(sent).includes('INSUFFICIENT_SCOPE')]).toEqual([
      true,
      true,
    ]);
    await mcp.close();
  });

  test('a token for another resource is refused on /mcp with the challenge', async () => {
    const token = await op.token(HARNESS, 'urn:lume:elsewhere');
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(JSON.stringify(await res.json())).toContain('TOKEN_AUDIENCE');
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=');
    // The hub's own audience works on its API too; the /mcp-bound one only on /mcp.
    const api = await fetch(`${f.hubUrl}/api/fleet`, {
      headers: { authorization: `Bearer ${await op.token(HARNESS, mcpUrl)}` },
    });
    expect(api.status).toBe(401);
    const ok = await fetch(`${f.hubUrl}/api/fleet`, {
      headers: { authorization: `Bearer ${await op.token(HARNESS, HUB_AUD)}` },
    });
    expect(ok.status).toBe(200);
  });

  test("the hub's API: a2a.read reads, a POST needs a2a.write (403 INSUFFICIENT_SCOPE)", async () => {
    const reader = await op.token(READER, HUB_AUD);
    const get = await fetch(`${f.hubUrl}/api/fleet`, {
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(get.status).toBe(200);
    const post = await fetch(`${f.hubUrl}/api/actions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'local-invoke', node: 'scanner', capability: 'x', args: {} }),
    });
    expect(post.status).toBe(403);
    expect(((await post.json()) as any).error.code).toBe('INSUFFICIENT_SCOPE');
  });

  test('a reader may ask (it reads) but may not open the mesh socket (it sends): 403 INSUFFICIENT_SCOPE', async () => {
    const reader = await op.token(READER, HUB_AUD);
    const ask = await fetch(`${f.hubUrl}/api/ask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'sector movement' }),
    });
    expect(ask.status).toBe(200);
    const ws = await fetch(`${f.hubUrl}/v1/connect`, {
      headers: {
        authorization: `Bearer ${reader}`,
        upgrade: 'websocket',
        connection: 'Upgrade',
        'sec-websocket-version': '13',
        'sec-websocket-key': btoa('0123456789abcdef'),
      },
    });
    expect(ws.status).toBe(403);
    expect(((await ws.json()) as any).error.code).toBe('INSUFFICIENT_SCOPE');
  });

  test('a call through the hub (signed by it) keeps the scopes: exec.* needs a2a.exec', async () => {
    const writer = await op.token(HARNESS, HUB_AUD);
    const post = (capability: string) =>
      fetch(`${f.hubUrl}/api/local-invoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'scanner', capability, args: {} }),
      });
    const exec = await post('exec.run');
    expect(exec.status).toBe(403);
    expect(((await exec.json()) as any).error.code).toBe('INSUFFICIENT_SCOPE');
    expect((await post('sector.movement')).status).toBe(200);
  });
});
