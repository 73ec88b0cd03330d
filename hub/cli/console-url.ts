/**
 * @module hub/cli/console-url — `bun run console-url`: prints a fresh one-time console URL for the
 * hub of this data folder (as the hub and the fleet print one at start). Opening it signs the
 * browser in as `console`; it works once, within an hour (docs/security.md).
 */

import { browserOrigin, newConsoleUrl } from '../http/tickets.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';
import { exitOnHelp } from './help.ts';

exitOnHelp(`usage: bun run console-url
Prints a fresh one-time console URL for the hub of this data folder (DATA_DIR): opening it signs
the browser in as console, once, within an hour.`);

const settings = settingsOrExit('console-url');
const fleet = await fleetOrExit('console-url', settings);
const port = settings.hub.port ?? fleet.hub.port;
try {
  console.log(
    newConsoleUrl(
      settings.dataDir,
      fleet.hub.name,
      browserOrigin(settings.hub.host, port, settings.hub.publicOrigins),
    ),
  );
} catch (e) {
  console.error(`console-url: ${(e as Error).message}`);
  process.exit(2);
}
