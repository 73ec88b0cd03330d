/**
 * @module lib/settings-or-exit — what every entry file (a node, the hub, each command) reads first: the
 * settings (config file over defaults, environment over both) and the fleet they name, read one
 * way everywhere; a setting or fleet file that cannot be read ends the process with one line and
 * exit code 2.
 */

import { PROJECT_ROOT } from './project-root.ts';
import { loadSettings, type Settings } from './config.ts';
import { fleetFilePath, loadFleet, type Fleet } from './config/fleet-file.ts';

/** The settings, or one line `<command>: <what is wrong>` and exit code 2. */
export function settingsOrExit(command: string): Settings {
  try {
    return loadSettings({ env: process.env, cwd: process.cwd() });
  } catch (e) {
    console.error(`${command}: ${(e as Error).message}`);
    process.exit(2);
  }
}

/** The fleet file the settings name: FLEET_FILE, else the data folder's, else the project's fixtures. */
export const fleetFileOf = (settings: Pick<Settings, 'fleetFile' | 'dataDir'>): string =>
  fleetFilePath({ fleetFile: settings.fleetFile, dataDir: settings.dataDir, root: PROJECT_ROOT });

/**
 * The fleet the settings name (see `fleetFileOf`), read the one way the hub and every command
 * read it, or one line `<command>: <what is wrong>` and exit code 2.
 */
export async function fleetOrExit(
  command: string,
  settings: Pick<Settings, 'fleetFile' | 'dataDir'>,
): Promise<Fleet> {
  try {
    return await loadFleet(fleetFileOf(settings));
  } catch (e) {
    console.error(`${command}: ${(e as Error).message}`);
    process.exit(2);
  }
}
