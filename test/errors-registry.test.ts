/**
 * The error registry in process: every code is declared once with an HTTP status and a message,
 * statuses are looked up by exact code (a look-alike gets the default), and the A2A rows carry
 * their JSON-RPC code and google.rpc status.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { codedFailureOf, failureParts } from '../lib/errors/as-data.ts';
import {
  buildRegistry,
  CAPABILITY_CODE_STATUS,
  declarations,
  ERROR_TABLES,
  isKnownCode,
  messageOf,
  specOf,
  statusOf,
  upstreamStatus,
  UPSTREAM_STATUS,
} from '../lib/errors/registry.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

describe('the registry', () => {
  test('every code has an HTTP status and a default message', () => {
    const bad = declarations().filter(
      ({ spec }) =>
        !Number.isInteger(spec.http) || spec.http < 400 || spec.http > 599 || !spec.message.trim(),
    );
    expect(bad).toEqual([]);
    expect(declarations().length).toBeGreaterThan(80);
  });

  test('no code is declared twice, and building a registry with a repeated code fails', () => {
    const codes = declarations().map((d) => d.code);
    expect(codes.filter((c, i) => codes.indexOf(c) !== i)).toEqual([]);
    expect(() =>
      buildRegistry({
        one: { X_CODE: { http: 400, message: 'x' } },
        two: { X_CODE: { http: 500, message: 'x' } },
      }),
    ).toThrow('X_CODE is declared in both one and two');
  });

  test('a status is found by exact code; a code spelled like a known one gets the default', () => {
    expect([
      statusOf('BAD_ARGS'),
      statusOf('ENTITY_BAD_QUERY'),
      statusOf('NEGOTIATION_UNREADABLE'),
      statusOf('PEER_STALE'),
    ]).toEqual([400, 400, 500, 401]);
    // Look-alikes of declared codes are unknown: no pattern picks their status.
    for (const code of [
      'SCANNER_BAD_QUERY',
      'X_BAD_CUSTOMER',
      'bad_args',
      'BAD_ARGS ',
      'PEER_ANYTHING',
      'toString',
      '__proto__',
      'constructor',
    ])
      expect([code, isKnownCode(code), statusOf(code), specOf(code)]).toEqual([
        code,
        false,
        CAPABILITY_CODE_STATUS,
        undefined,
      ]);
    expect(statusOf('NO_RECIPE', 502)).toBe(502);
    expect([messageOf('PEER_REPLAY'), messageOf('NO_RECIPE')]).toEqual([
      'nonce already used',
      'NO_RECIPE',
    ]);
  });

  test("another node's failure: the caller's mistake keeps its 4xx, a timeout is 504, the rest 502", () => {
    const cases = {
      BAD_ARGS: 400,
      UNKNOWN_CAPABILITY: 404,
      UNKNOWN_CUSTOMER: 400,
      PEER_TOO_LARGE: 413,
      PEER_BAD_SIGNATURE: UPSTREAM_STATUS,
      PEER_UNREACHABLE: 502,
      PEER_TIMEOUT: 504,
      A2A_TIMEOUT: 504,
      PEER_FAILED: 502,
      INTERNAL: 502,
      NO_RECIPE: 502,
      BUSY: 502,
    };
    expect(Object.fromEntries(Object.keys(cases).map((c) => [c, upstreamStatus(c)]))).toEqual(
      cases,
    );
  });

  test('the A2A rows carry JSON-RPC code, HTTP status and google.rpc status; no other row claims a JSON-RPC code', () => {
    expect(
      Object.keys(ERROR_TABLES.a2a).every(
        (c) => specOf(c)?.rpc !== undefined && specOf(c)?.grpc !== undefined,
      ),
    ).toBe(true);
    expect(specOf('TASK_NOT_FOUND')).toEqual({
      rpc: -32001,
      http: 404,
      grpc: 'NOT_FOUND',
      message: 'Task not found',
    });
    expect(declarations().filter((d) => d.layer !== 'a2a' && d.spec.rpc !== undefined)).toEqual([]);
  });
});

describe('a failure as data in an A2A message', () => {
  test('round-trips through the parts; text alone carries no code', () => {
    const parts = failureParts({ code: 'UNKNOWN_CUSTOMER', message: 'crm has no customer c-999' });
    expect(parts).toEqual([
      { text: 'crm has no customer c-999' },
      {
        data: { error: { code: 'UNKNOWN_CUSTOMER', message: 'crm has no customer c-999' } },
        mediaType: 'application/json',
      },
    ]);
    expect(codedFailureOf(JSON.parse(JSON.stringify(parts)))).toEqual({
      code: 'UNKNOWN_CUSTOMER',
      message: 'crm has no customer c-999',
    });
    expect(
      codedFailureOf([{ text: 'UNKNOWN_CUSTOMER: crm has no customer c-999' }]),
    ).toBeUndefined();
    for (const code of ['', 42, 'has space', 'x'.repeat(65), '../etc'])
      expect(codedFailureOf([{ data: { error: { code, message: 'm' } } }])).toBeUndefined();
  });
});
