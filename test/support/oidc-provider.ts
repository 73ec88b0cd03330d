/**
 * @module test/support/oidc-provider — a real OpenID provider (panva's `oidc-provider`, a certified
 * implementation) on a free loopback port, for the access-token tests: client-credentials and
 * authorization-code clients (confidential or public, signing a person in through the provider's
 * own development login and consent pages, where any login name is that person's subject), JWT
 * access tokens bound to an audience by resource indicators (RFC 8707), `rotate()` to change its
 * signing key while it runs, and `reconfigure()` to take changed clients (a redirect URI known late).
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export const SCOPE_ALL = 'a2a.read a2a.write a2a.exec';

export interface TestClient {
  id: string;
  secret: string;
  /** Scopes the client may ask for (space-separated). */
  scope: string;
  /** The `tenants` claim its tokens carry, when any. */
  tenants?: string[];
  /** Redirect URIs of an authorization-code client (none: client credentials only). */
  redirectUris?: string[];
  /** An authorization-code client without a secret (PKCE alone). */
  public?: boolean;
}

export interface TestProvider {
  issuer: string;
  /** Swaps the signing key: `keepOld` keeps the old one published (a rotation in progress). */
  rotate(keepOld?: boolean): Promise<void>;
  /** A client-credentials token for `client`, for `resource` (its audience). */
  token(client: TestClient, resource: string, scope?: string): Promise<string>;
  /** How many times its JWKS was fetched. */
  jwksFetches(): number;
  /** Takes the clients as they are now (same keys). */
  reconfigure(): void;
  stop(): Promise<void>;
}

async function newKey(alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA') {
  const params =
    alg === 'ES256'
      ? { name: 'ECDSA', namedCurve: 'P-256' }
      : alg === 'EdDSA'
        ? { name: 'Ed25519' }
        : {
            name: alg === 'RS256' ? 'RSASSA-PKCS1-v1_5' : 'RSA-PSS',
            modulusLength: 2048,
            publicExponent: new Uint8Array([1, 0, 1]),
            hash: 'SHA-256',
          };
  const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  return { ...jwk, kid: crypto.randomUUID(), alg, use: 'sig' };
}

export async function startProvider(opts: {
  clients: TestClient[];
  /** The resources (audiences) tokens may be asked for. */
  resources: string[];
  alg?: 'ES256' | 'RS256' | 'PS256' | 'EdDSA';
  ttlS?: number;
}): Promise<TestProvider> {
  const alg = opts.alg ?? 'ES256';
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let fetches = 0;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) fetches++;
    handler!(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tenantsOf = new Map(opts.clients.map((c) => [c.id, c.tenants]));

  const make = (keys: object[]) => {
    const provider = new Provider(issuer, {
      clients: opts.clients.map((c) => ({
        client_id: c.id,
        ...(c.public ? { token_endpoint_auth_method: 'none' } : { client_secret: c.secret }),
        scope: c.redirectUris ? `openid ${c.scope}` : c.scope,
        grant_types: c.redirectUris ? ['authorization_code'] : ['client_credentials'],
        response_types: c.redirectUris ? ['code'] : [],
        redirect_uris: c.redirectUris ?? [],
        id_token_signed_response_alg: alg,
      })),
      jwks: { keys: keys as never[] },
      scopes: ['openid', ...SCOPE_ALL.split(' ')],
      ttl: { ClientCredentials: opts.ttlS ?? 300, AccessToken: opts.ttlS ?? 300 },
      features: {
        devInteractions: { enabled: opts.clients.some((c) => c.redirectUris) },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => opts.resources[0]!,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (!opts.resources.includes(resource)) throw new Error('unknown resource');
            return {
              scope: SCOPE_ALL,
              audience: resource,
              accessTokenTTL: opts.ttlS ?? 300,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg } },
            };
          },
        },
      },
      extraTokenClaims: (_ctx: unknown, token: unknown) => {
        const t = tenantsOf.get((token as { clientId?: string }).clientId ?? '');
        return t ? { tenants: t } : undefined;
      },
    });
    return provider;
  };
  let keys = [await newKey(alg)];
  let provider = make(keys);
  handler = provider.callback();

  return {
    issuer,
    async rotate(keepOld = true) {
      keys = keepOld ? [await newKey(alg), ...keys] : [await newKey(alg)];
      provider = make(keys);
      handler = provider.callback();
    },
    async token(client, resource, scope = client.scope) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${btoa(`${client.id}:${client.secret}`)}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    jwksFetches: () => fetches,
    reconfigure() {
      provider = make(keys);
      handler = provider.callback();
    },
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
