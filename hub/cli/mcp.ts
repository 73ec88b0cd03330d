/**
 * @module hub/cli/mcp — `bun run mcp`: the fleet as an MCP server over stdio, for harnesses that
 * start a command. It speaks to the running hub's `/mcp` (LUME_HUB_URL, else the hub of the fleet
 * file) as the principal of LUME_TOKEN; without a token it gets the read-only tools a loopback hub
 * gives anyone. Stdout carries MCP messages only; everything else goes to stderr.
 */

import { createStdioBridge } from '../../lib/mcp/stdio-bridge.ts';
import { fleetOrExit, settingsOrExit } from './settings.ts';
import { exitOnHelp } from './help.ts';

exitOnHelp(`usage: bun run mcp
Relays MCP over stdio to the running hub's /mcp (LUME_HUB_URL, else the hub of the fleet file),
as the principal of LUME_TOKEN; without a token, the read-only tools a loopback hub gives anyone.
Details: docs/mcp.md.`);

const settings = settingsOrExit('mcp');
const hubUrl = (process.env.LUME_HUB_URL || (await fleetOrExit('mcp', settings)).hub.url).replace(
  /\/+$/,
  '',
);
const token = process.env.LUME_TOKEN || undefined;

const bridge = createStdioBridge({
  url: `${hubUrl}/mcp`,
  ...(token ? { token } : {}),
  write: (line) => process.stdout.write(`${line}\n`),
  warn: (message) => console.error(`mcp: ${message}`),
});
console.error(
  `mcp: relaying stdio to ${hubUrl}/mcp${token ? ' with LUME_TOKEN' : ' without a token (read-only tools)'}`,
);

let pending = '';
const stdin = Bun.stdin.stream().getReader();
const decoder = new TextDecoder();
for (;;) {
  const { done, value } = await stdin.read();
  if (done) break;
  pending += decoder.decode(value, { stream: true });
  let cut: number;
  while ((cut = pending.indexOf('\n')) >= 0) {
    void bridge.line(pending.slice(0, cut));
    pending = pending.slice(cut + 1);
  }
}
if (pending) void bridge.line(pending);
await bridge.close();
process.exit(0);
