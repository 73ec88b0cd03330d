/**
 * The one atomic writer: replace through a temporary file, create only when absent (linked or
 * direct), permission bits, and nothing left behind when a write fails.
 */

import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../lib/atomic-file.ts';
import { tempDir } from './support/node.ts';

setDefaultTimeout(20_000); // per file (Bun scopes it so): real servers and processes are slow on a busy machine

const dir = tempDir('lume-a2a-atomic-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  test('replaces a file, with mode 0600 by default, and leaves no temporary file', async () => {
    const path = join(dir, 'replace.json');
    writeFileSync(path, 'old');
    expect(await writeFileAtomic(path, 'new')).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(await writeFileAtomic(join(dir, 'fresh.json'), 'x')).toBe(true);
    expect(statSync(join(dir, 'fresh.json')).mode & 0o777).toBe(0o600);
    expect(await writeFileAtomic(join(dir, 'public.json'), 'x', { mode: 0o644 })).toBe(true);
    expect(statSync(join(dir, 'public.json')).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('ifAbsent keeps an existing file and says so, linked or direct', async () => {
    for (const direct of [false, true]) {
      const path = join(dir, `absent-${direct}.json`);
      expect(await writeFileAtomic(path, 'first', { ifAbsent: true, direct })).toBe(true);
      expect(await writeFileAtomic(path, 'second', { ifAbsent: true, direct })).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe('first');
    }
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('concurrent replaces leave one whole version, never a mix', async () => {
    const path = join(dir, 'race.json');
    const bodies = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ i, fill: String(i).repeat(10_000) }),
    );
    await Promise.all(bodies.map((b) => writeFileAtomic(path, b)));
    expect(bodies).toContain(readFileSync(path, 'utf8'));
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('a failed write throws and leaves nothing behind', async () => {
    const missing = join(dir, 'no-such-folder', 'x.json');
    for (const opts of [{}, { ifAbsent: true }, { ifAbsent: true, direct: true }]) {
      await expect(writeFileAtomic(missing, 'x', opts)).rejects.toThrow();
      expect(() => writeFileAtomicSync(missing, 'x', opts)).toThrow();
    }
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('the synchronous form and the JSON form write the same way', async () => {
    const path = join(dir, 'sync.json');
    expect(writeFileAtomicSync(path, 'a')).toBe(true);
    expect(writeFileAtomicSync(path, 'b', { ifAbsent: true })).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('a');
    await writeJsonAtomic(path, { a: 1 });
    expect(readFileSync(path, 'utf8')).toBe('{\n  "a": 1\n}\n');
  });
});
