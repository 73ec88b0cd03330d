/**
 * @module node/resolve/jobs — the executor's job records: one JSON file per job under
 * `DATA_DIR/resolve/jobs/`, written atomically (lib/atomic-file.ts), ids made here and checked
 * before any path is formed; kept within a count and an age, finished jobs oldest first.
 */

import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../lib/atomic-file.ts';
import { privateFolder, privateFolderAndFiles } from '../../lib/private-folder.ts';

export type JobState = 'running' | 'succeeded' | 'failed' | 'canceled';

/** A job as `exec.status` shows it. */
export interface Job {
  job_id: string;
  recipe: string;
  state: JobState;
  pid: number | null;
  exitCode: number | null;
  output: string;
  outputTruncated: boolean;
  progress?: { done: number; total: number };
  error?: string;
  startedAt: string;
  endedAt: string | null;
}

/** The stored record: the job plus what a restarted executor needs to find its orphan. */
export interface JobRecord extends Job {
  /** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22), when known. */
  procStart?: number;
}

const JOB_ID = /^job-[0-9a-f]{32}$/;

export const newJobId = () => `job-${crypto.randomUUID().replaceAll('-', '')}`;

/** The public view: exactly the fields of the contract. */
export function publicJob(r: JobRecord): Job {
  const { procStart: _, ...job } = r;
  return job;
}

/** How many job records are kept, and for how long (docs/limits.md). */
export interface JobRetention {
  maxStored: number;
  maxAgeMs: number;
}

export class JobFiles {
  readonly dir: string;
  /** Jobs settled since retention last ran: it runs again after 1 % of the bound. */
  private settledSince = 0;

  constructor(
    dataDir: string,
    private readonly retention?: JobRetention,
    private readonly now: () => number = Date.now,
  ) {
    this.dir = join(dataDir, 'resolve', 'jobs');
    // Job records hold commands and their output: the owner's only (files are 0600).
    privateFolder(join(dataDir, 'resolve'));
    privateFolderAndFiles(this.dir);
  }

  /**
   * Deletes finished job records past the count (oldest end first), then those that ended before
   * the age bound; never a running one. Answers how many it deleted.
   */
  retain(): number {
    if (!this.retention) return 0;
    this.settledSince = 0;
    const finished: { id: string; ended: number }[] = [];
    const ids = this.ids();
    for (const id of ids) {
      const r = this.read(id);
      if (r && r.state !== 'running')
        finished.push({ id, ended: Date.parse(r.endedAt ?? '') || 0 });
    }
    finished.sort((a, b) => a.ended - b.ended);
    const cutoff = this.now() - this.retention.maxAgeMs;
    const overCount = Math.max(0, ids.length - this.retention.maxStored);
    let deleted = 0;
    for (const [i, f] of finished.entries()) {
      if (i >= overCount && f.ended >= cutoff) break;
      try {
        unlinkSync(join(this.dir, `${f.id}.json`));
        deleted++;
      } catch {}
    }
    return deleted;
  }

  /** Undefined for a malformed id, a missing file or a record that cannot be read. */
  read(id: string): JobRecord | undefined {
    if (!JOB_ID.test(id)) return undefined;
    try {
      const r = JSON.parse(readFileSync(join(this.dir, `${id}.json`), 'utf8')) as JobRecord;
      return r && r.job_id === id ? r : undefined;
    } catch {
      return undefined;
    }
  }

  /** @throws Error on a malformed id (a bug: ids are made by `newJobId`) or a failed write. */
  write(r: JobRecord): void {
    if (!JOB_ID.test(r.job_id)) throw new Error(`bad job id ${r.job_id}`);
    writeFileAtomicSync(join(this.dir, `${r.job_id}.json`), JSON.stringify(r, null, 2));
  }

  /**
   * Writes `r` only while the stored record is still running, so a job settles once: whichever
   * of exit, cancel or restart recovery comes first wins. Synchronous, so atomic in-process.
   */
  settle(r: JobRecord): boolean {
    if (this.read(r.job_id)?.state !== 'running') return false;
    this.write(r);
    if (this.retention && ++this.settledSince >= Math.max(1, this.retention.maxStored / 100))
      this.retain();
    return true;
  }

  ids(): string[] {
    return readdirSync(this.dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5))
      .filter((id) => JOB_ID.test(id));
  }
}
