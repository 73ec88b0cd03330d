/**
 * `bun run bench`: runs every benchmark in turn, each in its own process, and prints their
 * figures. `bun run bench --write` also records the A2A, peer, fleet, idle memory and mesh-cluster sections in
 * docs/benchmarks.md; without it no tracked file changes.
 */

const write = process.argv.includes('--write') ? ['--write'] : [];
const benches: string[][] = [
  ['bench/a2a.ts', ...write],
  ['bench/peer.ts', ...write],
  ['bench/fleet.ts', ...write],
  ['bench/idle-rss.ts', ...write],
  ['bench/mesh-throughput.ts'],
  ['bench/mesh-history.ts'],
  ['bench/mesh-cluster.ts', ...write],
];

for (const cmd of benches) {
  console.log(`\n=== bun ${cmd.join(' ')} ===`);
  const proc = Bun.spawn(['bun', ...cmd], {
    cwd: `${import.meta.dir}/..`,
    stdout: 'inherit',
    stderr: 'inherit',
  });
  const code = await proc.exited;
  if (code !== 0) {
    console.error(`bun ${cmd.join(' ')} exited with ${code}`);
    process.exitCode = 1;
  }
}
