/**
 * Issuers' access tokens checked against a real OpenID provider (oidc-provider, on a free loopback
 * port) and a hand-made issuer for the hostile shapes: client-credentials tokens verify and name
 * `user:<issuer>#<sub>` with their scopes; a key rotation is followed with one refresh; `alg: none`,
 * HS256 keyed with the public key, another issuer or audience, expired, not yet valid, a huge
 * token, an invented `kid` in a loop, a discovery document naming another issuer and a plain-HTTP
 * issuer beyond loopback are each refused with their code; an issuer that stops answering keeps
 * its cached keys working and refuses the rest with the retryable ISSUER_UNAVAILABLE, in bounded time.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { checkIssuers, createOidcVerifier } from '../lib/auth/oidc/verifier.ts';
import { ownerKey } from '../lib/auth/principal.ts';
import { startHandIssuer, type HandIssuer } from './support/hand-issuer.ts';
import { SCOPE_ALL, startProvider, type TestProvider } from './support/oidc-provider.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): a real provider, RSA keys, a busy machine

const AUD = 'urn:lume:test-node';
const AGENT = { id: 'agent-one', secret: 'agent-one-secret-0123456789abcdef', scope: SCOPE_ALL };
let op: TestProvider;
let hand: HandIssuer;

beforeAll(async () => {
  op = await startProvider({ clients: [AGENT], resources: [AUD, 'urn:lume:elsewhere'] });
  hand = await startHandIssuer(AUD);
});
afterAll(async () => {
  await op.stop();
  await hand.stop();
});

const codeOf = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? 'ok' : r.error!.code);

describe('tokens of a real provider', () => {
  test('a client-credentials token names user:<issuer>#<client> with its scopes', async () => {
    const v = createOidcVerifier([{ issuer: op.issuer, audience: AUD }]);
    const r = await v.verify(await op.token(AGENT, AUD));
    if (!r.ok) throw new Error(r.error.message);
    expect(ownerKey(r.result)).toBe(`user:${op.issuer}#${AGENT.id}`);
    expect(r.result.scopes).toEqual(SCOPE_ALL.split(' '));
  });

  test('each of RS256, PS256 and EdDSA verifies too', async () => {
    for (const alg of ['RS256', 'PS256', 'EdDSA'] as const) {
      const p = await startProvider({ clients: [AGENT], resources: [AUD], alg });
      try {
        const v = createOidcVerifier([{ issuer: p.issuer, audience: AUD }]);
        const t = await p.token(AGENT, AUD);
        expect(JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString()).alg).toBe(alg);
        expect(codeOf(await v.verify(t))).toBe('ok');
      } finally {
        await p.stop();
      }
    }
  });

  test('a token for another resource is TOKEN_AUDIENCE', async () => {
    const v = createOidcVerifier([{ issuer: op.issuer, audience: AUD }]);
    expect(codeOf(await v.verify(await op.token(AGENT, 'urn:lume:elsewhere')))).toBe(
      'TOKEN_AUDIENCE',
    );
  });

  test('a rotated key is found with one refresh; a key taken away is TOKEN_KEY_UNKNOWN', async () => {
    const v = createOidcVerifier([{ issuer: op.issuer, audience: AUD }], { minRefreshMs: 0 });
    const before = await op.token(AGENT, AUD);
    expect(codeOf(await v.verify(before))).toBe('ok');
    const fetched = op.jwksFetches();
    await op.rotate(true);
    const after = await op.token(AGENT, AUD);
    expect(codeOf(await v.verify(after))).toBe('ok');
    expect(codeOf(await v.verify(before))).toBe('ok');
    expect(op.jwksFetches()).toBe(fetched + 1);
    await op.rotate(false);
    // The old keys are gone from the JWKS: a token signed with one no longer verifies.
    const latest = await op.token(AGENT, AUD);
    expect(codeOf(await v.verify(latest))).toBe('ok');
    expect(codeOf(await v.verify(after))).toBe('TOKEN_KEY_UNKNOWN');
  });

  test('an issuer out of reach: cached keys still verify, a new key is ISSUER_UNAVAILABLE, in bounded time', async () => {
    const p = await startProvider({ clients: [AGENT], resources: [AUD] });
    const v = createOidcVerifier([{ issuer: p.issuer, audience: AUD }], {
      minRefreshMs: 0,
      fetchTimeoutMs: 500,
    });
    const cached = await p.token(AGENT, AUD);
    expect(codeOf(await v.verify(cached))).toBe('ok');
    await p.rotate(false);
    const fresh = await p.token(AGENT, AUD);
    await p.stop();
    const started = Date.now();
    expect(codeOf(await v.verify(cached))).toBe('ok');
    expect(codeOf(await v.verify(fresh))).toBe('ISSUER_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('an issuer that never answers (a black hole) is ISSUER_UNAVAILABLE within the fetch timeout', async () => {
    // A listener that accepts and never answers.
    const hole = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    const issuer = `http://127.0.0.1:${hole.port}`;
    const v = createOidcVerifier([{ issuer, audience: AUD }], { fetchTimeoutMs: 300 });
    const t = await hand.sign({ iss: issuer });
    const started = Date.now();
    expect(codeOf(await v.verify(t))).toBe('ISSUER_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(1500);
    hole.stop(true);
  });
});

describe('hostile tokens and issuers', () => {
  const v = () => createOidcVerifier([{ issuer: hand.issuer, audience: AUD }]);
  const seg = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

  test('alg none is TOKEN_ALG_REFUSED', async () => {
    const good = await hand.sign();
    const [, payload] = good.split('.');
    expect(codeOf(await v().verify(`${seg({ alg: 'none' })}.${payload}.x`))).toBe(
      'TOKEN_ALG_REFUSED',
    );
  });

  test('HS256 keyed with the issuer public key is TOKEN_ALG_REFUSED', async () => {
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
    const forged = `${h}.${p}.${Buffer.from(mac).toString('base64url')}`;
    expect(codeOf(await v().verify(forged))).toBe('TOKEN_ALG_REFUSED');
  });

  test('a changed payload is TOKEN_SIGNATURE_INVALID', async () => {
    const [h, , s] = (await hand.sign()).split('.');
    const p = seg({ iss: hand.issuer, aud: AUD, sub: 'admin', exp: Date.now() / 1000 + 60 });
    expect(codeOf(await v().verify(`${h}.${p}.${s}`))).toBe('TOKEN_SIGNATURE_INVALID');
  });

  test('another issuer, expired, not yet valid, no subject, huge: each coded', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(codeOf(await v().verify(await hand.sign({ iss: 'https://idp.example' })))).toBe(
      'TOKEN_ISSUER_UNKNOWN',
    );
    expect(codeOf(await v().verify(await op.token(AGENT, AUD)))).toBe('TOKEN_ISSUER_UNKNOWN');
    expect(codeOf(await v().verify(await hand.sign({ exp: now - 120 })))).toBe('TOKEN_EXPIRED');
    // Within the documented leeway (60 s) an expiry just past still holds.
    expect(codeOf(await v().verify(await hand.sign({ exp: now - 10 })))).toBe('ok');
    expect(codeOf(await v().verify(await hand.sign({ nbf: now + 600 })))).toBe(
      'TOKEN_NOT_YET_VALID',
    );
    expect(codeOf(await v().verify(await hand.sign({ sub: undefined })))).toBe('TOKEN_MALFORMED');
    const huge = await hand.sign({ pad: 'x'.repeat(10_000) });
    expect(codeOf(await v().verify(huge))).toBe('TOKEN_MALFORMED');
  });

  test('invented kids do not make the node fetch keys in a loop', async () => {
    const verifier = v();
    expect(codeOf(await verifier.verify(await hand.sign()))).toBe('ok');
    const before = hand.jwksFetches();
    const forged = await Promise.all(
      Array.from({ length: 50 }, () => hand.sign({}, { kid: crypto.randomUUID() })),
    );
    const codes = await Promise.all(forged.map((t) => verifier.verify(t).then(codeOf)));
    expect(new Set(codes)).toEqual(new Set(['TOKEN_KEY_UNKNOWN']));
    expect(hand.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  test('a discovery document naming another issuer is not trusted', async () => {
    const other = await startHandIssuer(AUD);
    other.claimIssuer('https://idp.example');
    const verifier = createOidcVerifier([{ issuer: other.issuer, audience: AUD }]);
    expect(codeOf(await verifier.verify(await other.sign()))).toBe('ISSUER_UNAVAILABLE');
    expect(other.jwksFetches()).toBe(0);
    await other.stop();
  });

  test('an issuer URL that is not https (beyond loopback) is refused at start', () => {
    expect(() => checkIssuers([{ issuer: 'http://idp.example', audience: AUD }])).toThrow(/https/);
    expect(() => checkIssuers([{ issuer: 'ftp://127.0.0.1', audience: AUD }])).toThrow(/https/);
    expect(() => checkIssuers([{ issuer: 'https://idp.example', audience: '' }])).toThrow(
      /audience/,
    );
    expect(checkIssuers([{ issuer: 'https://idp.example', audience: AUD }])).toHaveLength(1);
  });
});
