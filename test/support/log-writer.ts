/**
 * @module test/support/log-writer — a child process for test/task-log.test.ts: opens the task log in
 * the folder named by its argument, saves 40 tasks, prints their ids once the saves resolved and
 * kills itself with SIGKILL at once, before the index's grouped commit (50 ms later) can run.
 */

import { LogTaskStore } from '../../lib/a2a/store/log-store.ts';
import { newTaskId } from '../../lib/a2a/store/task-store.ts';

const store = LogTaskStore.open({ dir: process.argv[2]!, log: () => {} });
const ids: string[] = [];
for (let i = 0; i < 40; i++) {
  const id = newTaskId();
  ids.push(id);
  const status = { state: 'completed' as const, timestamp: new Date().toISOString() };
  store.save({ task: { id, contextId: 'c', status, artifacts: [], history: [] }, push: [] });
}
await store.flush();
console.log(JSON.stringify(ids));
process.kill(process.pid, 'SIGKILL');
