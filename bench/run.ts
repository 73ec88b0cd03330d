/**
 * `bun run bench`: runs every benchmark in turn, each in its own process, and prints their
 * figures. The A2A and peer benchmarks also rewrite their sections of docs/benchmarks.md.
 */

const benches: string[][] = [
  ['bench/a2a.ts'],
  ['bench/peer.ts', '--write'],
  ['bench/fleet.ts'],
  ['bench/mesh-throughput.ts'],
  ['bench/mesh-history.ts'],
];

for (const cmd of benches) {
  console.log(`\n=== bun ${cmd.join(' ')} ===`);
  const proc = Bun.spawn(['bun', ...cmd], { cwd: `${import.meta.dir}/..`, stdout: 'inherit', stderr: 'inherit' });
  const code = await proc.exited;
  if (code !== 0) {
    console.error(`bun ${cmd.join(' ')} exited with ${code}`);
    process.exitCode = 1;
  }
}
