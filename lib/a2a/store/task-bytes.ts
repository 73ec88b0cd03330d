/**
 * @module lib/a2a/store/task-bytes — the bytes the JSON-file task store holds on disk: each task
 * file's size, kept in memory as files are written and deleted, and read once at start from the
 * shard folders (one stat per file), so the byte bound (`TASK_MAX_BYTES`) costs no scan per request.
 */

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isTaskId } from './task-store.ts';

export class TaskBytes {
  private readonly sizes = new Map<string, number>();
  private sum = 0;

  /** The sizes of the task files already in `dir`'s shard folders. */
  static scan(dir: string): TaskBytes {
    const bytes = new TaskBytes();
    for (let i = 0; i < 256; i++) {
      const shard = join(dir, i.toString(16).padStart(2, '0'));
      let names: string[];
      try {
        names = readdirSync(shard);
      } catch {
        continue;
      }
      for (const name of names) {
        const id = name.endsWith('.json') ? name.slice(0, -5) : '';
        if (!isTaskId(id)) continue;
        try {
          bytes.set(id, statSync(join(shard, name)).size);
        } catch {} // removed meanwhile: nothing to count
      }
    }
    return bytes;
  }

  get total(): number {
    return this.sum;
  }

  of(id: string): number {
    return this.sizes.get(id) ?? 0;
  }

  set(id: string, n: number): void {
    this.sum += n - this.of(id);
    this.sizes.set(id, n);
  }

  delete(id: string): void {
    this.sum -= this.of(id);
    this.sizes.delete(id);
  }
}
