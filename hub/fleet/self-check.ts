/**
 * @module hub/fleet/self-check — what `bun run fleet` checks before it starts anything, printed one
 * line per check in the nodes' format: the fleet file, every member's source file, the data
 * folder and the keys. A failing check says what to do, and the fleet does not start (children
 * that cannot start would only crash-loop). Taken ports are checked before, with their own line
 * and exit code (lib/port-check.ts): a second fleet says only that.
 */

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Fleet, FleetMember } from '../../lib/config/fleet-file.ts';

export interface FleetCheckLine {
  name: 'fleet' | 'files' | 'data' | 'keys';
  status: 'ok' | 'fail';
  detail: string;
  fix?: string;
}

export interface FleetCheckInput {
  fleet: Fleet;
  fleetFile: string;
  /** The members to start (the hub and the default local nodes). */
  members: FleetMember[];
  dataDir: string;
  /** The project folder member files are relative to. */
  root: string;
  /** Makes missing keys and loads the hub's peer identity (throws when the keys are unusable). */
  loadKeys: () => Promise<unknown>;
}

const fail = (name: FleetCheckLine['name'], detail: string, fix: string): FleetCheckLine => ({
  name,
  status: 'fail',
  detail,
  fix,
});

/** The fleet's start-up checks, in order; all run, so one start shows every problem. */
export async function fleetSelfCheck(i: FleetCheckInput): Promise<FleetCheckLine[]> {
  const lines: FleetCheckLine[] = [
    {
      name: 'fleet',
      status: 'ok',
      detail: `${i.fleetFile}: the hub and ${i.members.length - 1} node(s) to start`,
    },
  ];

  const missing = i.members.filter(
    (m) => !existsSync(isAbsolute(m.file) ? m.file : resolve(i.root, m.file)),
  );
  lines.push(
    missing.length
      ? fail(
          'files',
          `not found: ${missing.map((m) => `${m.name} (${m.file})`).join(', ')}`,
          `fix the file paths in ${i.fleetFile}`,
        )
      : { name: 'files', status: 'ok', detail: `${i.members.length} source file(s) found` },
  );

  const probe = join(i.dataDir, `.write-check-${process.pid}`);
  try {
    mkdirSync(i.dataDir, { recursive: true });
    writeFileSync(probe, '');
    rmSync(probe);
    lines.push({ name: 'data', status: 'ok', detail: `${i.dataDir} is writable` });
  } catch (e) {
    lines.push(
      fail(
        'data',
        `${i.dataDir} is not writable (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        'give the fleet a folder it may write (DATA_DIR)',
      ),
    );
  }

  if (lines.at(-1)!.status === 'fail') return lines;
  try {
    await i.loadKeys();
    lines.push({
      name: 'keys',
      status: 'ok',
      detail: `the hub's key pair and the ring of ${i.fleet.nodes.length + 1} member(s) are loaded`,
    });
  } catch (e) {
    lines.push(
      fail(
        'keys',
        (e as Error).message,
        `restore or remove the files under ${join(i.dataDir, 'keys')} (bun run keys makes missing ones)`,
      ),
    );
  }

  return lines;
}
