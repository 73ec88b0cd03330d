/**
 * @module lib/config/fleet-file — the fleet file (`fixtures/fleet.json`, or the one `bun run fleet add`
 * writes): who the hub and the nodes are, their ports and role lines, where each runs and
 * answers; read, validated and looked up here.
 */

import { existsSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { PRINCIPAL_NAME } from '../auth/principal.ts';

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

/**
 * Parses and validates a fleet document.
 * @throws Error with a readable message when the document is malformed (a configuration bug).
 */
export function parseFleet(doc: unknown): Fleet {
  if (!doc || typeof doc !== 'object') throw new Error('fleet: document must be an object');
  const d = doc as { hub?: unknown; nodes?: unknown };
  const member = (m: unknown, where: string): FleetMember => {
    if (!m || typeof m !== 'object') throw new Error(`fleet: ${where} must be an object`);
    const o = m as Record<string, unknown>;
    if (typeof o.name !== 'string' || !PRINCIPAL_NAME.test(o.name))
      throw new Error(`fleet: ${where}.name must match ${PRINCIPAL_NAME}`);
    if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
      throw new Error(`fleet: ${where}.port must be a port number`);
    if (typeof o.role !== 'string') throw new Error(`fleet: ${where}.role must be a string`);
    if (typeof o.file !== 'string') throw new Error(`fleet: ${where}.file must be a string`);
    if (o.relay !== undefined && typeof o.relay !== 'boolean')
      throw new Error(`fleet: ${where}.relay must be true or false`);
    const url =
      typeof o.url === 'string' ? o.url.replace(/\/+$/, '') : `http://127.0.0.1:${o.port}`;
    return {
      name: o.name,
      port: o.port,
      role: o.role,
      file: o.file,
      default: o.default !== false,
      url,
      ...(o.remote === true ? { remote: true } : {}),
      ...(o.relay === true ? { relay: true } : {}),
    };
  };
  if (!Array.isArray(d.nodes)) throw new Error('fleet: nodes must be an array');
  const fleet: Fleet = {
    hub: member(d.hub, 'hub'),
    nodes: d.nodes.map((n, i) => member(n, `nodes[${i}]`)),
  };
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
  const fleet = parseFleet(await file.json());
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
