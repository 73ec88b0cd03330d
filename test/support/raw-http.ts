/**
 * Test support: one HTTP/1.1 request written byte for byte over a TCP socket (a malformed `Host`
 * or request line that `fetch` would never send), answered with the status line, the headers and
 * the body the server wrote before it closed the connection.
 */

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
  bytes: number;
}

export function rawRequest(url: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const done = () => {
      const all = Buffer.concat(chunks).toString('latin1');
      const cut = all.indexOf('\r\n\r\n');
      const head = cut < 0 ? all : all.slice(0, cut);
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: cut < 0 ? '' : all.slice(cut + 4),
        bytes: all.length,
      });
    };
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open: (s) => void s.write(text),
        data: (_s, d) => void chunks.push(Buffer.from(d)),
        close: done,
        end: (s) => void s.end(),
        error: (_s, e) => reject(e),
        connectError: (_s, e) => reject(e),
      },
    });
  });
}

/** A GET with a given Host and nothing else odd, closing the connection after the answer. */
export const rawGet = (url: string, host: string, path = '/healthz') =>
  rawRequest(url, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
