/**
 * @module hub/cli/keys — `bun run keys`: creates and rotates the peer channel's keys under DATA_DIR/keys/ for every member
 * of FLEET_FILE (formats in docs/peer.md), and the bearer tokens of clients outside the fleet
 * (docs/security.md). Prints file names, key ids and token names, never key material; a new token
 * is printed once, when it is made, and only its hash is stored.
 *
 *   bun run keys [init] [--force]   create the fleet secret, missing pairs and the ring
 *   bun run keys rotate <node>      new pair for <node>; the ring keeps the previous key too
 *   bun run keys retire <node>      end a rotation: drop <node>'s previous key from the ring
 *   bun run keys list               modes and key ids in the ring
 *   bun run keys token add <name> [--tenants a,b]  make a bearer token for <name> and print it
 *                                   once; with --tenants, it may act only in those tenants
 *   bun run keys token list         token names and when they were made
 *   bun run keys token revoke <name>  remove <name>'s token (running nodes notice within a second)
 */

import { relative } from 'node:path';
import { ensureKeys, listKeys, retireKeys, rotateKey } from '../../lib/peer/keys.ts';
import { addToken, listTokens, revokeToken } from '../../lib/auth/tokens.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';
import { exitOnHelp } from './help.ts';

const USAGE =
  'usage: bun run keys [init [--force] | rotate <node> | retire <node> | list | token add <name> [--tenants a,b] | token list | token revoke <name>]';
exitOnHelp(USAGE);
// The config file and the environment (DATA_DIR, FLEET_FILE); paths print relative to here.
const settings = settingsOrExit('keys');
const dataDir = relative(process.cwd(), settings.dataDir) || '.';
const [command = 'init', ...rest] = process.argv.slice(2);

/** `token add|list|revoke`: tokens need no fleet file. */
function tokens(args: string[]): number {
  const [sub, name, ...extra] = args;
  // `--tenants a,b` (or `--tenants=a,b`) after the name of `token add`.
  const flag = extra[0]?.startsWith('--tenants=')
    ? [extra[0].slice('--tenants='.length)]
    : extra[0] === '--tenants' && extra.length === 2
      ? [extra[1]!]
      : undefined;
  if (extra.length && !(sub === 'add' && flag && extra.length <= 2)) return usage();
  if (sub === 'add' && name) {
    const tenants = flag?.[0]?.split(',').map((t) => t.trim());
    const token = addToken(dataDir, name, undefined, tenants);
    const where = tenants ? `, tenants ${tenants.join(',')}` : '';
    console.log(
      `token for ${name}${where} (shown once; ${dataDir}/keys/tokens.json keeps only its hash):`,
    );
    console.log(token);
    return 0;
  }
  if (sub === 'list' && !name) {
    const all = listTokens(dataDir);
    if (!all.length) console.log('no tokens');
    for (const t of all)
      console.log(
        `${t.name.padEnd(32)} ${t.created}${t.tenants ? `  tenants ${t.tenants.join(',')}` : ''}`,
      );
    return 0;
  }
  if (sub === 'revoke' && name) {
    console.log(revokeToken(dataDir, name) ? `revoked ${name}` : `${name} has no token`);
    return 0;
  }
  return usage();
}

function usage(): number {
  console.error(USAGE);
  return 2;
}

async function main(): Promise<number> {
  if (command === 'token') return tokens(rest);
  const fleet = await fleetOrExit('keys', settings);
  switch (command) {
    case 'init': {
      if (rest.some((a) => a !== '--force')) break;
      const { created } = await ensureKeys(dataDir, fleet, { force: rest.includes('--force') });
      console.log(
        created.length
          ? `created in ${dataDir}/keys: ${created.join(', ')}`
          : `keys in ${dataDir}/keys are complete`,
      );
      return 0;
    }
    case 'rotate': {
      if (rest.length !== 1) break;
      const r = await rotateKey(dataDir, fleet, rest[0]!);
      console.log(`${rest[0]}: new key ${r.kid}; ring holds ${r.ring.join(', ')}`);
      console.log(
        `restart the fleet so peers load the ring, then run: bun run keys retire ${rest[0]}`,
      );
      return 0;
    }
    case 'retire': {
      if (rest.length !== 1) break;
      const r = await retireKeys(dataDir, fleet, rest[0]!);
      console.log(
        `${rest[0]}: ring keeps ${r.kept.join(', ')}${r.retired.length ? `; retired ${r.retired.join(', ')}` : ''}`,
      );
      return 0;
    }
    case 'list': {
      if (rest.length) break;
      for (const k of await listKeys(dataDir))
        console.log(`${k.node.padEnd(12)} ${k.mode.padEnd(8)} ${k.kids.join(' ')}`);
      return 0;
    }
  }
  return usage();
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(e.message); // messages name files and nodes, never key material
    process.exit(1);
  },
);
