/**
 * @module lib/atomic-file — the one way the project writes a file that others read while it runs (task
 * records, negotiation records, resolve jobs, key files, mesh attachments): a reader sees the old
 * file or the new one, never half of either.
 *
 * - replace (default): a temporary file beside the target, then a rename over it;
 * - `ifAbsent`: the same temporary file, linked into place only if no file has that name yet
 *   (answers false then, nothing is replaced);
 * - `ifAbsent` + `direct`: one exclusive create and write, no temporary file. For a file nobody has
 *   been told about yet (a new task, a fresh attachment folder): a crash can leave it half
 *   written, so its reader must treat an unparsable file as absent.
 */

import { chmodSync, linkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { chmod, link, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Permission bits of the file (default 0o600). */
  mode?: number;
  /** Never replace an existing file; the write answers false when one is there. */
  ifAbsent?: boolean;
  /** With `ifAbsent`: write the target itself, exclusively, without a temporary file. */
  direct?: boolean;
}

/** Read once: reading the umask in Node-compatible runtimes briefly changes it. */
const UMASK = process.umask();
let tmpSeq = 0;

/** A hidden name beside the target, unique in this process; stores skip `*.tmp` names. */
function tmpName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${(tmpSeq++).toString(36)}.tmp`);
}

const isExists = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'EEXIST';

/**
 * Writes `data` to `path` atomically (see the module header for the three ways).
 * @returns false when `ifAbsent` is set and the file exists; true once the data is in place.
 * @throws the file-system error otherwise (folder missing, disk full, permissions); no temporary file is left.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<boolean> {
  const mode = opts.mode ?? 0o600;
  if (opts.ifAbsent && opts.direct) {
    try {
      await writeFile(path, data, { flag: 'wx', mode });
    } catch (e) {
      if (isExists(e)) return false;
      await unlink(path).catch(() => {});
      throw e;
    }
    if (mode & UMASK) await chmod(path, mode);
    return true;
  }
  const tmp = tmpName(path);
  try {
    await writeFile(tmp, data, { flag: 'wx', mode });
    if (mode & UMASK) await chmod(tmp, mode); // the umask narrowed `mode`
    if (!opts.ifAbsent) {
      await rename(tmp, path);
      return true;
    }
    try {
      await link(tmp, path); // fails with EEXIST instead of replacing: no clobbering, no race
      return true;
    } catch (e) {
      if (isExists(e)) return false;
      throw e;
    } finally {
      await unlink(tmp);
    }
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}

/** {@link writeFileAtomic}, synchronously: for callers that read, decide and write in one turn. */
export function writeFileAtomicSync(
  path: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): boolean {
  const mode = opts.mode ?? 0o600;
  if (opts.ifAbsent && opts.direct) {
    try {
      writeFileSync(path, data, { flag: 'wx', mode });
    } catch (e) {
      if (isExists(e)) return false;
      try {
        unlinkSync(path);
      } catch {}
      throw e;
    }
    if (mode & UMASK) chmodSync(path, mode);
    return true;
  }
  const tmp = tmpName(path);
  try {
    writeFileSync(tmp, data, { flag: 'wx', mode });
    if (mode & UMASK) chmodSync(tmp, mode);
    if (!opts.ifAbsent) {
      renameSync(tmp, path);
      return true;
    }
    try {
      linkSync(tmp, path);
      return true;
    } catch (e) {
      if (isExists(e)) return false;
      throw e;
    } finally {
      unlinkSync(tmp);
    }
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
}

/** Writes a value as JSON (two-space indent, final newline unless `compact`) with {@link writeFileAtomic}. */
export function writeJsonAtomic(
  path: string,
  value: unknown,
  opts: AtomicWriteOptions & { compact?: boolean } = {},
): Promise<boolean> {
  return writeFileAtomic(
    path,
    opts.compact ? JSON.stringify(value) : `${JSON.stringify(value, null, 2)}\n`,
    opts,
  );
}
