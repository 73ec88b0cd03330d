/**
 * Test support: a task store in memory, for in-process tests of the engine. Each save stores a
 * deep copy, so what a test reads back is what was stored, not the engine's live object; `failNext`
 * makes the next saves fail, as a full disk or a lost database would.
 */

import type { TaskRecord, TaskStore } from '../../lib/a2a/store/task-store.ts';
import type { ListTasksPage, ListTasksQuery, TaskEvent } from '../../lib/a2a/types.ts';

export class MemoryTaskStore implements TaskStore {
  readonly records = new Map<string, TaskRecord>();
  /** Every save, in order: the task's state and the event its record's log gained. */
  readonly saves: { id: string; state: string; event?: TaskEvent['kind'] }[] = [];
  private failing = 0;
  isOpen = true;

  /** Never full: the bound is the file and PostgreSQL stores' (test/task-store-bound.test.ts). */
  hasRoom(): boolean {
    return true;
  }

  get cached() {
    return { entries: this.records.size, bytes: 0 };
  }

  /** The next `count` saves fail. */
  failNext(count = 1): void {
    this.failing = count;
  }

  get(id: string): TaskRecord | undefined {
    const rec = this.records.get(id);
    return rec && structuredClone(rec);
  }

  async save(rec: TaskRecord): Promise<void> {
    if (this.failing > 0) {
      this.failing--;
      throw new Error('store unavailable');
    }
    // The event a save carries is the one its record's event log gained since the last save.
    const before = this.records.get(rec.task.id)?.events?.at(-1)?.generation ?? 0;
    const last = rec.events?.at(-1);
    const event = last && last.generation > before ? last : undefined;
    this.records.set(rec.task.id, structuredClone(rec));
    this.saves.push({
      id: rec.task.id,
      state: rec.task.status.state,
      ...(event ? { event: event.kind } : {}),
    });
  }

  list(q: ListTasksQuery, creator: string | null): ListTasksPage {
    const tasks = [...this.records.values()]
      .filter((r) => creator === null || (r.creator ?? 'anonymous') === creator)
      .filter((r) => !q.contextId || r.task.contextId === q.contextId)
      .map((r) => structuredClone(r.task));
    return { tasks, nextPageToken: '', pageSize: q.pageSize, totalSize: tasks.length };
  }

  count(): number {
    return this.records.size;
  }

  /** Keeps everything: a test's handful of tasks is within any bound. */
  async retain(): Promise<number> {
    return 0;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.isOpen = false;
  }
}
