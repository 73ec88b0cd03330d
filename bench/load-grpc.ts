/**
 * A closed-loop gRPC load generator: `streams` loops each make the same unary call (one framed
 * request message, read to its trailers) as fast as the answers come, for `seconds`, over
 * `sessions` HTTP/2 connections (a gRPC channel is one connection). Plain `node:http2`, so the
 * client costs about what bench/load.ts's fetch does. Prints one JSON line like bench/load.ts.
 *
 * Usage: bun bench/load-grpc.ts <host:port> <path> <streams> <seconds> <message-file> [sessions] [key:value ...]
 */

import http2 from 'node:http2';

const [address, path, streamArg, secArg, file, sessionArg, ...metaArgs] = process.argv.slice(2);
if (!address || !path || !streamArg || !secArg || !file) {
  console.error(
    'usage: bun bench/load-grpc.ts <host:port> <path> <streams> <seconds> <message-file> [sessions] [key:value ...]',
  );
  process.exit(2);
}
const message = new Uint8Array(await Bun.file(file).arrayBuffer());
const body = new Uint8Array(5 + message.length);
new DataView(body.buffer).setUint32(1, message.length);
body.set(message, 5);
const headers: Record<string, string> = {
  ':method': 'POST',
  ':path': path,
  'content-type': 'application/grpc',
  te: 'trailers',
};
for (const m of metaArgs) headers[m.slice(0, m.indexOf(':'))] = m.slice(m.indexOf(':') + 1);
const sessions = Array.from({ length: Number(sessionArg ?? 1) }, () =>
  http2.connect(`http://${address}`),
);
const deadline = performance.now() + Number(secArg) * 1000;
const latencies: number[] = [];
let errors = 0;

function call(session: http2.ClientHttp2Session): Promise<boolean> {
  return new Promise((resolve) => {
    const req = session.request(headers);
    let ok = false;
    req.on('trailers', (t) => (ok = t['grpc-status'] === '0'));
    req.on('data', () => {});
    req.on('close', () => resolve(ok));
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

async function loop(i: number) {
  const session = sessions[i % sessions.length]!;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    if (!(await call(session))) errors++;
    latencies.push(performance.now() - t0);
  }
}

const start = performance.now();
await Promise.all(Array.from({ length: Number(streamArg) }, (_, i) => loop(i)));
const elapsed = (performance.now() - start) / 1000;
for (const s of sessions) s.close();
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
