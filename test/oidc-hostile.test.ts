/**
 * Every hostile token and issuer of the access-token work, sent to a real node on each binding it
 * serves: HTTP+JSON and JSON-RPC answer 401 with the `TOKEN_*` code (503 `ISSUER_UNAVAILABLE` when
 * the issuer's discovery points elsewhere) and a `WWW-Authenticate: Bearer` challenge, gRPC
 * `UNAUTHENTICATED` (`UNAVAILABLE`); a good token without an A2A scope is 403 / `PERMISSION_DENIED`.
 * Invented kids fetch the keys at most once; an issuer that is not https is refused at start; the
 * log names each code and never a token. The issuers are hand-made (test/support/hand-issuer.ts),
 * so each token is exactly the attack.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { rmSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import { createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { encodeMessage } from '../lib/a2a/grpc/encode.ts';
import { A2A_SCHEMA } from '../lib/a2a/proto/schema.ts';
import { loadSettings } from '../lib/config.ts';
import { grpcAddressOf, rawClient, unary } from './support/grpc.ts';
import { startHandIssuer, type HandIssuer } from './support/hand-issuer.ts';
import { startNode, tempDir, type TestNode } from './support/node.ts';
import { realNodeDefs } from './support/fleet.ts';

setDefaultTimeout(30_000); // per file (Bun scopes it so): a node and two issuers on a busy machine

const AUD = 'urn:lume:scanner';
let hand: HandIssuer;
let elsewhere: HandIssuer;
let node: TestNode;
let client: grpc.Client;
const proof: string[] = [];

beforeAll(async () => {
  hand = await startHandIssuer(AUD);
  // A trusted issuer whose discovery document names another issuer.
  elsewhere = await startHandIssuer(AUD);
  elsewhere.claimIssuer('https://idp.example');
  const [def] = await realNodeDefs(['scanner'], { dataDir: undefined });
  node = await startNode(def!, {
    access: {
      oidc: createOidcVerifier([
        { issuer: hand.issuer, audience: AUD },
        { issuer: elsewhere.issuer, audience: AUD },
      ]),
    },
  });
  client = rawClient(grpcAddressOf(node.node.card() as never)!);
});
afterAll(async () => {
  for (const line of proof) console.log(line);
  client?.close();
  await node?.dispose();
  await hand?.stop();
  await elsewhere?.stop();
});

const seg = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** The same request on the three bindings: HTTP+JSON and JSON-RPC status and body, gRPC code and reason. */
async function onEveryBinding(token: string) {
  const bearer = { authorization: `Bearer ${token}`, 'a2a-version': '1.0' };
  const rest = await fetch(`${node.url}/tasks`, { headers: bearer });
  const rpc = await fetch(`${node.url}/a2a`, {
    method: 'POST',
    headers: { ...bearer, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
  });
  const g = await unary(
    client,
    'ListTasks',
    encodeMessage(A2A_SCHEMA, 'lf.a2a.v1.ListTasksRequest', {}),
    bearer,
  );
  return {
    rest: [rest.status, await rest.text(), rest.headers.get('www-authenticate')] as const,
    rpc: [rpc.status, await rpc.text()] as const,
    grpc: [g.code, `${g.reason ?? ''} ${g.details}`] as const,
  };
}

async function hs256WithPublicKey(): Promise<string> {
  const h = seg({ alg: 'HS256', kid: hand.publicJwk.kid });
  const p = seg({ iss: hand.issuer, aud: AUD, sub: 'x', exp: Date.now() / 1000 + 60 });
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(JSON.stringify(hand.publicJwk)),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${h}.${p}`));
  return `${h}.${p}.${Buffer.from(mac).toString('base64url')}`;
}

describe('hostile tokens on HTTP+JSON, JSON-RPC and gRPC', () => {
  test('each is refused with its code: 401 / UNAUTHENTICATED, never logged', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = await hand.sign({ scope: 'a2a.read' });
    const cases: [string, string, string][] = [
      ['alg none', `${seg({ alg: 'none' })}.${good.split('.')[1]}.x`, 'TOKEN_ALG_REFUSED'],
      ['HS256 keyed with the public key', await hs256WithPublicKey(), 'TOKEN_ALG_REFUSED'],
      ['another issuer', await hand.sign({ iss: 'https://idp.example' }), 'TOKEN_ISSUER_UNKNOWN'],
      ['another audience', await hand.sign({ aud: 'urn:lume:other' }), 'TOKEN_AUDIENCE'],
      ['expired', await hand.sign({ exp: now - 120 }), 'TOKEN_EXPIRED'],
      ['not yet valid', await hand.sign({ nbf: now + 600 }), 'TOKEN_NOT_YET_VALID'],
      ['an invented kid', await hand.sign({}, { kid: 'invented' }), 'TOKEN_KEY_UNKNOWN'],
      // Past 8192 bytes a bearer value is refused before it is parsed: plain UNAUTHENTICATED.
      ['huge (10 KB)', await hand.sign({ pad: 'x'.repeat(10_000) }), 'UNAUTHENTICATED'],
    ];
    for (const [what, token, code] of cases) {
      const r = await onEveryBinding(token);
      expect([what, r.rest[0], r.rest[1].includes(code)]).toEqual([what, 401, true]);
      expect(r.rest[2]).toContain('Bearer');
      // JSON-RPC and gRPC carry UNAUTHENTICATED as their own code (-32000, 16), the TOKEN_* in the text.
      const named = (text: string) => code === 'UNAUTHENTICATED' || text.includes(code);
      expect([what, r.rpc[0], named(r.rpc[1])]).toEqual([what, 401, true]);
      expect([what, r.grpc[0], named(r.grpc[1])]).toEqual([what, 16, true]);
      proof.push(
        `${what}: HTTP+JSON ${r.rest[0]}, JSON-RPC ${r.rpc[0]}, gRPC ${r.grpc[0]} (${code})`,
      );
    }
    const logged = node.log.lines.join('\n');
    for (const [, token, code] of cases) {
      if (code !== 'UNAUTHENTICATED') expect(logged).toContain(code);
      for (const part of token.split('.').slice(1))
        if (part.length >= 20) expect(logged).not.toContain(part.slice(0, 40));
    }
  });

  test('discovery pointing elsewhere: 503 ISSUER_UNAVAILABLE (retryable) / UNAVAILABLE, its keys never fetched', async () => {
    const r = await onEveryBinding(await elsewhere.sign({ scope: 'a2a.read' }));
    expect([r.rest[0], r.rest[1].includes('ISSUER_UNAVAILABLE')]).toEqual([503, true]);
    expect([r.rpc[0], r.rpc[1].includes('ISSUER_UNAVAILABLE')]).toEqual([503, true]);
    expect(r.grpc[0]).toBe(14);
    expect(elsewhere.jwksFetches()).toBe(0);
    proof.push(
      `discovery naming another issuer: HTTP+JSON ${r.rest[0]}, JSON-RPC ${r.rpc[0]}, gRPC ${r.grpc[0]}; JWKS fetched ${elsewhere.jwksFetches()} times`,
    );
  });

  test('a good token without an A2A scope: 403 INSUFFICIENT_SCOPE / PERMISSION_DENIED', async () => {
    const r = await onEveryBinding(await hand.sign({ scope: 'openid profile' }));
    expect([r.rest[0], r.rest[1].includes('INSUFFICIENT_SCOPE')]).toEqual([403, true]);
    expect([r.rpc[0], r.rpc[1].includes('INSUFFICIENT_SCOPE')]).toEqual([403, true]);
    expect(r.grpc[0]).toBe(7);
    proof.push(`no A2A scope: HTTP+JSON ${r.rest[0]}, JSON-RPC ${r.rpc[0]}, gRPC ${r.grpc[0]}`);
  });

  test('50 invented kids over HTTP fetch the keys at most once', async () => {
    const before = hand.jwksFetches();
    const forged = await Promise.all(
      Array.from({ length: 50 }, () => hand.sign({}, { kid: crypto.randomUUID() })),
    );
    const statuses = await Promise.all(
      forged.map((t) =>
        fetch(`${node.url}/tasks`, {
          headers: { authorization: `Bearer ${t}`, 'a2a-version': '1.0' },
        }).then((r) => r.status),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(hand.jwksFetches() - before).toBeLessThanOrEqual(1);
    proof.push(
      `50 invented kids: all 401, JWKS fetched ${hand.jwksFetches() - before} more time(s)`,
    );
  });

  test('an issuer that is not https (beyond loopback) stops the start', () => {
    const env = { OIDC_ISSUER: 'http://idp.example', OIDC_AUDIENCE: AUD };
    const cwd = tempDir();
    expect(() => loadSettings({ env, cwd })).toThrow(/https/);
    rmSync(cwd, { recursive: true, force: true });
  });
});
