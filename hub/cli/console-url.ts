/**
 * @module hub/cli/console-url — `bun run console-url`: prints a fresh one-time console URL for the
 * hub of this data folder (as the hub and the fleet print one at start). Opening it signs the
 * browser in as `console`, or with `--as <token name>` as that token's user; it works once, within
 * an hour (docs/security.md).
 */

import { listTokens } from '../../lib/auth/tokens.ts';
import { browserOrigin, newConsoleUrl } from '../http/tickets.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';
import { exitOnHelp } from './help.ts';

exitOnHelp(`usage: bun run console-url [--as <token name>]
Prints a fresh one-time console URL for the hub of this data folder (DATA_DIR): opening it signs
the browser in as console, once, within an hour. --as signs it in as the user of that token
(bun run keys token list), whose tasks the console then shows; revoking the token ends the session.`);

const args = process.argv.slice(2);
const asAt = args.indexOf('--as');
const as = asAt >= 0 ? args[asAt + 1] : undefined;
if ((asAt >= 0 && !as) || args.some((a, i) => a !== '--as' && i !== asAt + 1)) {
  console.error('console-url: usage: bun run console-url [--as <token name>]');
  process.exit(2);
}

const settings = settingsOrExit('console-url');
const fleet = await fleetOrExit('console-url', settings);
const port = settings.hub.port ?? fleet.hub.port;
try {
  if (as !== undefined && !listTokens(settings.dataDir).some((t) => t.name === as)) {
    console.error(
      `console-url: ${as.slice(0, 40)} has no token in this data folder (bun run keys token list)`,
    );
    process.exit(2);
  }
  console.log(
    newConsoleUrl(
      settings.dataDir,
      fleet.hub.name,
      browserOrigin(settings.hub.host, port, settings.hub.publicOrigins),
      as,
    ),
  );
} catch (e) {
  console.error(`console-url: ${(e as Error).message}`);
  process.exit(2);
}
