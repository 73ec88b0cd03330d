/**
 * @module lib/a2a/store/record-cache — the task stores' in-memory records: least recently used out first,
 * bounded by entries and by stored bytes; a record the store pins (a write in flight) stays.
 */

/** A record is keyed by its task's id. */
export class RecordCache<R extends { task: { id: string } }> {
  private readonly entries = new Map<string, { rec: R; bytes: number }>();
  private bytes = 0;

  /** `pinned` says which records must stay whatever the bounds (their write has not finished). */
  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly pinned: (id: string) => boolean,
  ) {}

  /** What the cache holds now: records and their stored bytes. */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** The record, without making it the most recently used. */
  peek(id: string): R | undefined {
    return this.entries.get(id)?.rec;
  }

  /** The record, now the most recently used. */
  get(id: string): R | undefined {
    const hit = this.entries.get(id);
    if (!hit) return undefined;
    this.entries.delete(id);
    this.entries.set(id, hit);
    return hit.rec;
  }

  /** Puts a record at the young end; `bytes` is its stored size when known (else the last known stays). */
  set(rec: R, bytes?: number): void {
    const id = rec.task.id;
    const prev = this.entries.get(id);
    this.entries.delete(id);
    this.entries.set(id, { rec, bytes: prev?.bytes ?? 0 });
    if (bytes !== undefined) this.setSize(id, bytes);
    this.trim();
  }

  /** Records the stored size of a cached record; nothing when it is not cached. */
  setSize(id: string, bytes: number): void {
    const hit = this.entries.get(id);
    if (!hit) return;
    this.bytes += bytes - hit.bytes;
    hit.bytes = bytes;
  }

  /** Forgets a record (its task was deleted). */
  delete(id: string): void {
    const hit = this.entries.get(id);
    if (!hit) return;
    this.entries.delete(id);
    this.bytes -= hit.bytes;
  }

  /** Evicts the least recently used records past either bound, skipping pinned ones. */
  trim(): void {
    if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) return;
    for (const [id, hit] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      if (this.pinned(id)) continue;
      this.entries.delete(id);
      this.bytes -= hit.bytes;
    }
  }
}
