/** The peer handlers mounted on Elysia, in process: the framework must hand over the raw body. */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Elysia } from 'elysia';
import { handlePeerInvoke, type PeerRouteDeps } from '../lib/fleet/peer-routes.ts';
import { ed25519PublicKey } from '../lib/peer/ed25519.ts';
import { createVerifier } from '../lib/peer/verifier.ts';
import { createSigner } from '../lib/peer/signer.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const seed = crypto.getRandomValues(new Uint8Array(32));
const deps: PeerRouteDeps = {
  self: 'hub',
  verifier: createVerifier({
    self: 'hub',
    ring: new Map([['crm', { mode: 'ed25519', ed25519: [ed25519PublicKey(seed)] }]]),
  }),
  dispatch: async (capability, args) => ({ ok: true, result: { capability, args } }),
};
const app = new Elysia({ normalize: false }).post('/peer/invoke', ({ request }) =>
  handlePeerInvoke(request, deps),
);
const signer = createSigner({ node: 'crm', seed });

async function call(body: string, headers: Record<string, string>) {
  const res = await app.handle(
    new Request('http://localhost/peer/invoke', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    }),
  );
  return [res.status, await res.json()];
}

describe('mounted on Elysia', () => {
  test('a signed call passes, its replay and an unsigned call are refused', async () => {
    const body = JSON.stringify({ capability: 'echo', args: { n: 1 } });
    const headers = await signer.sign(
      { to: 'hub', route: '/peer/invoke', scope: 'echo' },
      new TextEncoder().encode(body),
    );
    expect([await call(body, headers), await call(body, headers), await call(body, {})]).toEqual([
      [200, { ok: true, result: { capability: 'echo', args: { n: 1 } } }],
      [401, { ok: false, error: { code: 'PEER_REPLAY', message: expect.any(String) } }],
      [401, { ok: false, error: { code: 'PEER_UNSIGNED', message: expect.any(String) } }],
    ]);
  });

  test('the signature covers the bytes sent, whitespace included', async () => {
    const body = '{ "capability" : "echo" ,\n "args": {"n": 2} }';
    expect(
      await call(
        body,
        await signer.sign(
          { to: 'hub', route: '/peer/invoke', scope: 'echo' },
          new TextEncoder().encode(body),
        ),
      ),
    ).toEqual([200, { ok: true, result: { capability: 'echo', args: { n: 2 } } }]);
  });
});
