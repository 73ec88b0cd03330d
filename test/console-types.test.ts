/**
 * The console's shapes stay tied to the server's: every shape console/types.d.ts exports is either
 * checked against its server type in test/console-types.check.ts (compiled by `bun run typecheck`)
 * or named below as one with no single server type, with the reason.
 */

import { expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

setDefaultTimeout(20_000); // per file (Bun scopes it so)

const ROOT = join(import.meta.dir, '..');

/** Console shapes with no one server type to check them against, and why. */
const UNCHECKED: Record<string, string> = {
  Page: "the console's own navigation",
  FieldEvent: "the console's own event",
  FormEvent: "the console's own event",
  ApiError: 'the Failure of lib/errors/result.ts without its field; read from every answer',
  Refusal: "the console's api module's refusal",
  TraceOutcome: 'a member of TraceRecord, checked with it',
  TracePage: 'built inline by hub/http/api.ts',
  AskFact: 'a member of AskAnswer, checked with it',
  AskTry: 'a member of AskAnswer, checked with it',
  SectorMove: "scanner's sector.movement result, untyped capability data",
  SectorMovement: "scanner's sector.movement result, untyped capability data",
  Recommendation: "customer.reach's result, untyped capability data",
  CustomerReach: "customer.reach's result, untyped capability data",
  CoverageGap: 'a member of EntityCoverage, checked with it',
  HubModel: 'built inline by hub/http/api.ts',
  NegotiationSummary: 'built inline by the negotiation list',
  HubResults: 'capability results keyed by name, untyped capability data',
  HubAnswer: 'the hub API envelope, generic over its result',
  TaskState: 'a member of Task, checked with it',
  SendAnswer: 'a Task or a Message, each checked',
  A2AErrorBody: 'the google.rpc status body, written by lib/a2a/rest/binding.ts',
  PresentPeer: 'a member of Roster frames, built inline by the mesh HTTP API',
  Roster: 'built inline by the mesh HTTP API',
  HistoryPage: 'built inline by the mesh HTTP API',
  ProjectEvent: 'the mesh watch stream, built inline',
  MeshIdentity: 'built inline by the console mesh routes',
  MeshSent: 'built inline by the console mesh routes',
};

test('every console shape is checked against the server, or named with why it is not', () => {
  const types = readFileSync(join(ROOT, 'console/types.d.ts'), 'utf8');
  const checks = readFileSync(join(ROOT, 'test/console-types.check.ts'), 'utf8');
  const exported = [...types.matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!);
  const checked = new Set([...checks.matchAll(/\bC\.(\w+)/g)].map((m) => m[1]!));
  const neither = exported.filter((n) => !checked.has(n) && !(n in UNCHECKED));
  expect(neither).toEqual([]);
  // A name listed as unchecked that is checked (or gone) is stale.
  expect(Object.keys(UNCHECKED).filter((n) => checked.has(n) || !exported.includes(n))).toEqual([]);
});

test('the check file is compiled by the typecheck', () => {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
  expect(config.include).toContain('test');
  expect(config.exclude ?? []).not.toContain('test/console-types.check.ts');
});
