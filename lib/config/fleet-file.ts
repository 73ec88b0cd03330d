/**
 * @module lib/config/fleet-file — the fleet file (`fixtures/fleet.json`, or the one `bun run fleet add`
 * writes): who the hub and the nodes are, their ports and role lines, where each runs and
 * answers; read, validated and looked up here.
 */

import { existsSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { PRINCIPAL_NAME } from '../auth/principal.ts';
import {
  boolean,
  boundedString,
  checkShape,
  listOf,
  member,
  optional,
  plainObject,
  ShapeError,
  type Guard,
} from '../json/guards.ts';

export interface FleetMember {
  name: string;
  port: number;
  role: string;
  /**
   * Source file that starts this member: absolute, relative to the fleet file's folder when it
   * starts with `./` or `../` (made absolute by `loadFleet`), otherwise relative to the project root.
   */
  file: string;
  /** False for members `bun run fleet` does not start by default (e.g. the conformance agent). */
  default: boolean;
  /** Base URL peers use to reach it (`http://127.0.0.1:<port>` unless the file says otherwise). */
  url: string;
  /**
   * Runs elsewhere (added with `bun run fleet add`): nothing here starts it or makes its keys; the
   * ring holds the public key it published.
   */
  remote?: boolean;
  /** Marked a relay (`"relay": true`): it may name the principal it forwards a call for, as the ring's mark allows. */
  relay?: boolean;
}

export interface Fleet {
  hub: FleetMember;
  nodes: FleetMember[];
}

/** A member's name: a principal name (lower-case letters, digits, dashes). */
const memberName: Guard<string> = (v, path) => {
  if (typeof v !== 'string' || !PRINCIPAL_NAME.test(v))
    throw new ShapeError(path, `${path} must match ${PRINCIPAL_NAME}`);
  return v;
};
const port: Guard<number> = (v, path) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 65535)
    throw new ShapeError(path, `${path} must be a port number`);
  return v;
};
const text = boundedString(4096, { empty: true });

/** One member (the hub or a node) of a fleet document. */
function memberOf(m: unknown, where: string): FleetMember {
  const o = plainObject(m, where);
  const name = member(o, 'name', where, memberName);
  const p = member(o, 'port', where, port);
  const role = member(o, 'role', where, text);
  const file = member(o, 'file', where, text);
  const url = member(o, 'url', where, optional(text));
  const relay = member(o, 'relay', where, optional(boolean));
  return {
    name,
    port: p,
    role,
    file,
    default: o.default !== false,
    url: url !== undefined ? url.replace(/\/+$/, '') : `http://127.0.0.1:${p}`,
    ...(o.remote === true ? { remote: true } : {}),
    ...(relay === true ? { relay: true } : {}),
  };
}

/**
 * Parses and validates a fleet document.
 * @throws Error with a readable message when the document is malformed (a configuration bug).
 */
export function parseFleet(doc: unknown): Fleet {
  const checked = checkShape(() => {
    const d = plainObject(doc, 'document');
    // The node list's shape first, then each member in order, as the messages have always come.
    if (!Array.isArray(d.nodes)) throw new ShapeError('nodes', 'nodes must be an array');
    return { hub: memberOf(d.hub, 'hub'), nodes: member(d, 'nodes', '', listOf(memberOf, 10_000)) };
  });
  if (!checked.ok) throw new Error(`fleet: ${checked.message}`);
  const fleet: Fleet = checked.value;
  const seen = new Set<string>();
  for (const m of [fleet.hub, ...fleet.nodes]) {
    if (seen.has(m.name)) throw new Error(`fleet: duplicate name ${m.name}`);
    seen.add(m.name);
  }
  return fleet;
}

/**
 * Which fleet file a process reads: FLEET_FILE when set, else `<dataDir>/fleet.json` when
 * `bun run fleet add` has written one, else the project's `fixtures/fleet.json`.
 */
export function fleetFilePath(o: {
  fleetFile?: string | undefined;
  dataDir: string;
  root: string;
}): string {
  if (o.fleetFile) return resolve(o.fleetFile);
  const local = resolve(o.dataDir, 'fleet.json');
  return existsSync(local) ? local : resolve(o.root, 'fixtures', 'fleet.json');
}

/** Reads and validates the fleet file. @throws Error when it is missing or malformed. */
export async function loadFleet(path: string): Promise<Fleet> {
  const file = Bun.file(path);
  if (!(await file.exists())) throw new Error(`fleet: file not found: ${path}`);
  let doc: unknown;
  try {
    doc = await file.json();
  } catch (e) {
    // A parse error alone says neither which file nor that it is the fleet's.
    throw new Error(`fleet: ${path} is not valid JSON: ${(e as Error).message}`);
  }
  const fleet = parseFleet(doc);
  // A node file named `./…` or `../…` lives beside the fleet file, wherever that is.
  for (const m of [fleet.hub, ...fleet.nodes])
    if (/^\.\.?\//.test(m.file)) m.file = resolve(dirname(path), m.file);
  return fleet;
}

/** Finds a member (hub or node) by name. */
export function fleetMember(fleet: Fleet, name: string): FleetMember | undefined {
  return fleet.hub.name === name ? fleet.hub : fleet.nodes.find((n) => n.name === name);
}

/**
 * The fleet file a hub changes, and so the one every process follows while it runs: the one read, unless that is the project's own
 * `fixtures/fleet.json` (then `DATA_DIR/fleet.json`, which every process prefers from then on).
 */
export function writableFleetFile(read: string, dataDir: string, root: string): string {
  const fixtures = resolve(root, 'fixtures') + sep;
  return resolve(read).startsWith(fixtures) ? resolve(dataDir, 'fleet.json') : resolve(read);
}
