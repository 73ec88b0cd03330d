/**
 * A closed-loop HTTP load generator: `connections` loops each POST the same body as fast as the
 * answers come, for `seconds`. Runs in its own process; prints one JSON line with requests/s,
 * latency percentiles (ms) and the number of failed requests.
 *
 * Usage: bun bench/load.ts <url> <connections> <seconds> <body-file> [header:value ...]
 */

export {};

const [url, connArg, secArg, bodyFile, ...headerArgs] = process.argv.slice(2);
if (!url || !connArg || !secArg || !bodyFile) {
  console.error(
    'usage: bun bench/load.ts <url> <connections> <seconds> <body-file> [header:value ...]',
  );
  process.exit(2);
}
const body = await Bun.file(bodyFile).text();
const headers: Record<string, string> = { 'Content-Type': 'application/json' };
for (const h of headerArgs) {
  const i = h.indexOf(':');
  headers[h.slice(0, i)] = h.slice(i + 1);
}
const connections = Number(connArg);
const deadline = performance.now() + Number(secArg) * 1000;
const latencies: number[] = [];
let errors = 0;

async function loop() {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    try {
      const res = await fetch(url!, { method: 'POST', headers, body });
      const text = await res.text();
      if (!res.ok || text.includes('"error"')) errors++;
    } catch {
      errors++;
    }
    latencies.push(performance.now() - t0);
  }
}

const start = performance.now();
await Promise.all(Array.from({ length: connections }, loop));
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? 0;
console.log(
  JSON.stringify({
    requests: latencies.length,
    rps: Math.round(latencies.length / elapsed),
    p50: +pct(50).toFixed(2),
    p99: +pct(99).toFixed(2),
    errors,
  }),
);
