/**
 * A closed-loop HTTP/1.1 load generator: `connections` keep-alive TCP connections each POST the
 * body as fast as the answers come, for `seconds`. Requests are written to the socket as bytes
 * and answers read by their Content-Length (or chunks), no fetch around them, so the generator
 * takes little of the machine's CPU from the server it measures (as wrk does). A body whose
 * message id is `bench-1` gets a fresh id per request (`bench-<pid>-<n>`), so no server answers
 * from an earlier request's record. Runs in its own process; prints one JSON line with
 * requests/s, latency percentiles (ms) and the number of failed requests (a status other than
 * 200, or an answer that holds `"error"`).
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
const target = new URL(url);
const body = await Bun.file(bodyFile).text();
const [before, after] = body.split('"bench-1"') as [string, string | undefined];
let sent = 0;
const extra = headerArgs.map((h) => {
  const i = h.indexOf(':');
  return `${h.slice(0, i)}: ${h.slice(i + 1)}\r\n`;
});
const head = `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n${extra.join('')}`;
/** The next request's bytes: a fresh message id where the body has `bench-1`. */
function nextRequest(): string {
  const b = after === undefined ? body : `${before}"bench-${process.pid}-${++sent}"${after}`;
  return `${head}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
}

const connections = Number(connArg);
const deadline = performance.now() + Number(secArg) * 1000;
const latencies: number[] = [];
let errors = 0;
const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * The length of the first complete answer in `buf` and whether it succeeded, or undefined while
 * it is still arriving.
 */
function answer(buf: Buffer): { size: number; ok: boolean } | undefined {
  const end = buf.indexOf(CRLF2);
  if (end < 0) return undefined;
  const headers = buf.toString('latin1', 0, end).toLowerCase();
  const ok = headers.startsWith('http/1.1 200');
  const len = /\r\ncontent-length: *(\d+)/.exec(headers);
  const start = end + 4;
  if (len) {
    const size = start + Number(len[1]);
    if (buf.length < size) return undefined;
    return { size, ok: ok && !buf.toString('utf8', start, size).includes('"error"') };
  }
  // Chunked: size lines and chunks until the empty chunk.
  let at = start;
  let text = '';
  for (;;) {
    const line = buf.indexOf('\r\n', at);
    if (line < 0) return undefined;
    const n = Number.parseInt(buf.toString('latin1', at, line), 16);
    if (buf.length < line + 2 + n + 2) return undefined;
    if (n === 0) return { size: line + 4, ok: ok && !text.includes('"error"') };
    text += buf.toString('utf8', line + 2, line + 2 + n);
    at = line + 2 + n + 2;
  }
}

/** One connection's loop: resolves when the deadline has passed and its last answer is in. */
function loop(): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let t0 = 0;
    const send = (s: Bun.Socket) => {
      t0 = performance.now();
      s.write(nextRequest());
    };
    Bun.connect({
      hostname: target.hostname,
      port: Number(target.port),
      socket: {
        open(s) {
          s.setNoDelay(true);
          send(s);
        },
        data(s, chunk) {
          buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
          const a = answer(buf);
          if (!a) return;
          latencies.push(performance.now() - t0);
          if (!a.ok) errors++;
          buf = buf.subarray(a.size);
          if (performance.now() < deadline) send(s);
          else s.end();
        },
        close: () => resolve(),
        error: (_s, e) => reject(e),
      },
    }).catch(reject);
  });
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
    clientCpuUs: Math.round(
      (process.cpuUsage().user + process.cpuUsage().system) / Math.max(1, latencies.length),
    ),
  }),
);
