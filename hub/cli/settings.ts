/**
 * @module hub/cli/settings — what every hub command reads first: the settings and the fleet they
 * name, the same block a node starts with (lib/settings-or-exit.ts, shared because the published
 * node bin cannot reach hub/).
 */

export { fleetFileOf, fleetOrExit, settingsOrExit } from '../../lib/settings-or-exit.ts';
