/**
 * The agent card: generated from the catalog, both protocol generations and both bindings,
 * caching headers and a warning when bound to every interface without PEER_PUBLIC_URL.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { AGENT_BACKED_EXTENSION, readAgentBacked } from '../lib/a2a/card/card.ts';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, startNode, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

let node: TestNode;
beforeAll(async () => {
  node = await startNode(scanner({ fixturesDir: FIXTURES }));
});
afterAll(() => node.dispose());

describe('agent card', () => {
  test('lists JSON-RPC 1.0 and 0.3 on the same URL, HTTP+JSON 1.0 at the root, then gRPC 1.0 on its own port; v0.3 top-level fields, skills from the catalog', async () => {
    const card = await (await fetch(`${node.url}/.well-known/agent-card.json`)).json();
    const url = `${node.url}/a2a`;
    expect(card.supportedInterfaces).toEqual([
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: node.url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      {
        url: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        protocolBinding: 'GRPC',
        protocolVersion: '1.0',
      },
    ]);
    expect([card.url, card.protocolVersion, card.preferredTransport]).toEqual([
      url,
      '0.3.0',
      'JSONRPC',
    ]);
    expect(card.capabilities).toEqual({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: false,
      extensions: [
        {
          uri: AGENT_BACKED_EXTENSION,
          description: expect.any(String),
          required: false,
          params: { agentBacked: false },
        },
      ],
    });
    expect(readAgentBacked(card)).toBe(false);
    const caps = await (await fetch(`${node.url}/capabilities`)).json();
    expect(card.skills.map((s: any) => s.id)).toEqual(caps.capabilities.map((c: any) => c.id));
    expect(card.skills.every((s: any) => s.tags.length > 0)).toBe(true);
    expect(card.warnings).toBeUndefined();
  });

  test('ETag, Last-Modified and Cache-Control; If-None-Match answers 304; agent.json is the same card', async () => {
    const res = await fetch(`${node.url}/.well-known/agent-card.json`);
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^W\/".+"$/);
    expect(Date.parse(res.headers.get('last-modified')!)).not.toBeNaN();
    expect(res.headers.get('cache-control')).toContain('max-age=');
    const again = await fetch(`${node.url}/.well-known/agent-card.json`, {
      headers: { 'If-None-Match': etag! },
    });
    expect(again.status).toBe(304);
    const legacy = await fetch(`${node.url}/.well-known/agent.json`);
    expect(await legacy.json()).toEqual(await res.json());
  });

  test('bound to 0.0.0.0 without PEER_PUBLIC_URL the card warns; with it, the card advertises it', async () => {
    const open = await startNode(scanner({ fixturesDir: FIXTURES }), { host: '0.0.0.0' });
    const pub = await startNode(scanner({ fixturesDir: FIXTURES }), {
      host: '0.0.0.0',
      publicUrl: 'http://scanner.example.net:4102',
    });
    try {
      const warned = await (await fetch(`${open.url}/.well-known/agent-card.json`)).json();
      expect(warned.warnings).toHaveLength(1);
      expect(warned.warnings[0]).toContain('PEER_PUBLIC_URL');
      const advertised = await (await fetch(`${pub.url}/.well-known/agent-card.json`)).json();
      expect(advertised.warnings).toBeUndefined();
      expect(advertised.url).toBe('http://scanner.example.net:4102/a2a');
    } finally {
      await open.dispose();
      await pub.dispose();
    }
  });

  test('unknown routes answer coded JSON 404', async () => {
    const res = await fetch(`${node.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route' } });
  });
});
