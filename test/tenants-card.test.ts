/**
 * A tenant's own agent card (`/{tenant}/.well-known/agent-card.json`, lib/node/node-card.ts): it
 * lists that tenant's 1.0 interfaces (then the untenanted 0.3 one), is signed with the node's key
 * like the main card, and the official SDK's `createFromUrl` on it acts in the tenant: the task it
 * completes is found in acme and is TASK_NOT_FOUND in globex. A tenant not served has no card.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { JWKS_PATH, verifyCardSignature } from '../lib/a2a/card/signature.ts';
import scanner from '../node/scanner/index.ts';
import { FIXTURES, startNode, TEST_TOKEN, testTokens, type TestNode } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers are slow on a busy machine

let node: TestNode;
beforeAll(async () => {
  node = await startNode(scanner({ fixturesDir: FIXTURES }), {
    tenants: ['acme', 'globex'],
    access: { tokens: testTokens() },
  });
});
afterAll(async () => {
  await node.dispose();
});

const auth = { serviceParameters: { authorization: `Bearer ${TEST_TOKEN}` } };

describe("a tenant's card", () => {
  test('lists its interfaces alone and is signed with the main card’s key', async () => {
    const res = await fetch(`${node.url}/acme/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as any;
    expect(
      card.supportedInterfaces.map(
        (i: any) => `${i.protocolBinding} ${i.protocolVersion} ${i.tenant ?? '-'}`,
      ),
    ).toEqual(['JSONRPC 1.0 acme', 'HTTP+JSON 1.0 acme', 'GRPC 1.0 acme', 'JSONRPC 0.3 -']);
    const set = (await (await fetch(`${node.url}${JWKS_PATH}`)).json()) as {
      keys: { kid: string; x: string }[];
    };
    const keys = set.keys.map((k) => ({
      kid: k.kid,
      publicKey: new Uint8Array(Buffer.from(k.x, 'base64url')),
    }));
    expect(verifyCardSignature(card, keys)).toMatchObject({ ok: true });
    expect((await fetch(`${node.url}/initech/.well-known/agent-card.json`)).status).toBe(404);
    expect((await fetch(`${node.url}/ACME/.well-known/agent-card.json`)).status).toBe(404);
  });

  test("the official SDK's createFromUrl on it completes a task in the tenant", async () => {
    const client: any = await new ClientFactory().createFromUrl(
      `${node.url}/acme/.well-known/agent-card.json`,
      '',
    );
    const sent: any = await client.sendMessage(
      {
        message: {
          messageId: crypto.randomUUID(),
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'text', value: 'sector movement' },
              filename: '',
              mediaType: '',
              metadata: undefined,
            },
          ],
          contextId: '',
          taskId: '',
          extensions: [],
          referenceTaskIds: [],
          metadata: undefined,
        },
      },
      auth,
    );
    const task = sent.task ?? sent;
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await client.getTask({ id: task.id }, auth)).id).toBe(task.id);
    const inTenant = async (tenant: string) => {
      const res = await fetch(`${node.url}/a2a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer ${TEST_TOKEN}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'GetTask',
          params: { tenant, id: task.id },
        }),
      });
      const body = (await res.json()) as any;
      return body.result?.id ?? body.error?.message;
    };
    expect(await inTenant('acme')).toBe(task.id);
    expect(await inTenant('globex')).toMatch(/not found/i);
    expect(await inTenant('')).toMatch(/not found/i);
  });
});
