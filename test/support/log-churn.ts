/**
 * @module test/support/log-churn — churn on a task log: many tasks saved, updated and deleted by
 * retention, with event-loop turns between (so background compaction runs among the writes), from
 * a fixed seed. Run as a script (`bun test/support/log-churn.ts <dir>`) it churns a log in `<dir>`,
 * runs a full compaction cycle and prints the store's figures as one line of JSON: a test runs it
 * as a process with a time bound, so a compaction that never ends fails it instead of hanging it.
 */

import { LogTaskStore, type LogTaskStoreOptions } from '../../lib/a2a/store/log-store.ts';
import { newTaskId, type TaskRecord } from '../../lib/a2a/store/task-store.ts';
import type { TaskState } from '../../lib/a2a/types.ts';
import { silentLog } from '../../lib/log.ts';

/** Small segments and a small count bound: many segments, many deletions. */
export const CHURN_OPTIONS = { segmentBytes: 2048, maxStored: 30, cacheSize: 3 } as const;

/** Recent enough that the age bound (720 h) deletes nothing. */
const NOW = Date.now() - 60_000;

export function churnRecord(state: TaskState, ts: number, text: string): TaskRecord {
  const id = newTaskId();
  const contextId = crypto.randomUUID();
  return {
    task: {
      id,
      contextId,
      status: { state, timestamp: new Date(ts).toISOString() },
      artifacts: [],
      history: [
        { messageId: crypto.randomUUID(), role: 'user', parts: [{ text }], taskId: id, contextId },
      ],
    },
    push: [],
  };
}

export const openChurnLog = (dir: string, more: Partial<LogTaskStoreOptions> = {}) =>
  LogTaskStore.open({ dir, log: silentLog, ...CHURN_OPTIONS, ...more });

/**
 * `rounds` operations on `store`: new tasks (some left working), updates of earlier ones (each
 * then finished), retention rounds, and event-loop turns; answers how many tasks it saved.
 */
export async function churn(store: LogTaskStore, rounds: number, seed = 7): Promise<number> {
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const ids: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const roll = random();
    if (roll < 0.5 || !ids.length) {
      const r = churnRecord(
        random() < 0.1 ? 'working' : 'completed',
        NOW + i,
        `task ${i} `.repeat(8),
      );
      ids.push(r.task.id);
      await store.save(r);
    } else if (roll < 0.85) {
      const held = store.get(ids[Math.floor(random() * ids.length)]!);
      if (!held) continue; // deleted by retention
      held.task.history[0]!.parts = [{ text: `update ${i}` }];
      held.task.status = { state: 'completed', timestamp: new Date(NOW + i).toISOString() };
      await store.save(held);
    } else if (roll < 0.95) await store.retain();
    else await new Promise<void>((r) => setImmediate(r)); // background compaction steps run
  }
  await store.retain();
  return ids.length;
}

if (import.meta.main) {
  const store = openChurnLog(process.argv[2]!);
  const saved = await churn(store, Number(process.argv[3] ?? 3000));
  const before = store.bytes;
  store.compact();
  console.log(
    JSON.stringify({
      saved,
      before,
      bytes: store.bytes,
      liveBytes: store.liveBytes,
      count: store.count(),
    }),
  );
  await store.close();
}
