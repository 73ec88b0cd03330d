/** Benchmark helpers: start the hub process, raw WebSocket clients that claim a name. */

import type { Subprocess } from 'bun';

export async function spawnHub(
  mode: 'file' | 'memory',
  dir: string,
  projects: string[],
): Promise<{ url: string; proc: Subprocess; stop(): Promise<void> }> {
  // BENCH_PROFILE_DIR: the hub runs under Bun's profiler and writes its profile there when stopped.
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  const proc = Bun.spawn(
    [
      'bun',
      ...profile,
      new URL('./mesh-hub-proc.ts', import.meta.url).pathname,
      mode,
      dir,
      ...projects,
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('\n')) {
    const r = await reader.read();
    if (r.done) throw new Error('hub process ended before printing its port');
    text += new TextDecoder().decode(r.value);
  }
  const url = `http://127.0.0.1:${text.trim()}`;
  return {
    url,
    proc,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}

export interface BenchClient {
  ws: WebSocket;
  name: string;
  onFrame: (f: any) => void;
}

/**
 * Opens a socket, claims `name`, resolves when claimed. Frames after that go to `onFrame`, parsed,
 * or as their text with `raw` (a load generator that reads only a frame's type then costs less).
 */
export function claim(
  url: string,
  project: string,
  name: string,
  onFrame: (f: any, c: BenchClient) => void,
  raw = false,
): Promise<BenchClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/connect`);
    const c: BenchClient = { ws, name, onFrame: (f) => onFrame(f, c) };
    ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', protocolVersion: 3, project, name }));
    ws.onmessage = (e) => {
      const f = JSON.parse(String(e.data));
      if (f.type === 'claimed') {
        ws.onmessage = raw
          ? (e2) => c.onFrame(e2.data)
          : (e2) => c.onFrame(JSON.parse(String(e2.data)));
        resolve(c);
      } else reject(new Error(JSON.stringify(f)));
    };
    ws.onerror = () => reject(new Error('socket error'));
  });
}

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
