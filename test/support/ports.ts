/**
 * Test support: loopback ports for a process that must be told its port before it starts (a fleet
 * file, PostgreSQL). Port 0 is not possible there, so a port is picked, checked free and handed
 * out; between the check and the process's own bind another process could take it. The ports come
 * from below the kernel's ephemeral range, where no port-0 bind of any test (or test worker
 * running beside this one) ever lands, at random so two workers picking at once rarely meet.
 */

import { readFileSync } from 'node:fs';

/** The lowest ephemeral port (Linux's ip_local_port_range), 32768 where it cannot be read. */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const LOW = 10_000;
const HIGH = ephemeralLow();
const handedOut = new Set<number>();

/** Whether a loopback TCP listener can take `port` now. */
function free(port: number): boolean {
  try {
    Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
}

/** `n` distinct loopback ports that were free a moment ago, none handed out before in this process. */
export function reservePorts(n: number): number[] {
  const ports: number[] = [];
  for (let tries = 0; ports.length < n; tries++) {
    if (tries > 10_000) throw new Error('no free loopback port below the ephemeral range');
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port) || !free(port)) continue;
    handedOut.add(port);
    ports.push(port);
  }
  return ports;
}
