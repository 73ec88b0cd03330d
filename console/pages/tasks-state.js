/**
 * @module console/pages/tasks-state — the Tasks page's state: the task list as the hub pushes it
 * (a task the page changed put in place, never over a newer state), the actions' busy flag and
 * error, and the fleet's executors (nodes whose card lists `exec.submit`; resolve first).
 */
import { useEffect, useState } from 'preact/hooks';
import { fleet, tasksStream, toApiError } from '../api.js';
import { RUNNING_TASK_STATES } from '../constants.js';
import { useStream } from './common.js';

/** @typedef {import('../types').Task} Task */

/**
 * Whether `a`'s status is later than `b`'s (ISO timestamps of one format compare as text); in
 * the same millisecond a settled state is the later one.
 * @param {Task} a @param {Task} b
 */
const newerThan = (a, b) => {
  const ta = a.status.timestamp ?? '';
  const tb = b.status.timestamp ?? '';
  if (ta !== tb) return ta > tb;
  return !RUNNING_TASK_STATES.has(a.status.state) && RUNNING_TASK_STATES.has(b.status.state);
};

/** The task list, live, with the page's actions run one at a time under a busy flag. */
export function useTaskList() {
  const [tasks, setTasks] = useState(/** @type {Task[] | null} */ (null));
  const [error, setError] = useState(/** @type {import('../types').ApiError | null} */ (null));
  const [busy, setBusy] = useState(false);

  /**
   * Puts a task the page changed in place (newest first for one not listed yet). The stream may
   * have brought a later state before the answer that changed it arrives (a job that settles at
   * once): an answer never replaces a state newer than its own.
   * @param {Task} t
   */
  const upsert = (t) =>
    setTasks((ts) =>
      ts?.some((x) => x.id === t.id)
        ? ts.map((x) => (x.id === t.id && !newerThan(x, t) ? t : x))
        : [t, ...(ts ?? [])],
    );
  const live = useStream(
    tasksStream,
    (/** @type {import('../types').TaskPage} */ p) => (setTasks(p.tasks), setError(null)),
    [],
  );

  /** @param {() => Promise<void>} fn */
  const act = async (fn) => {
    setBusy(true);
    try {
      await fn();
      setError(null);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };
  return { tasks, error, busy, live, upsert, act };
}

/**
 * The fleet's executors (null while the fleet is read) and the one picked.
 * @returns {[string[] | null, string, (e: string) => void]}
 */
export function useExecutors() {
  const [executor, setExecutor] = useState('');
  /** The fleet's executors, or null while the fleet is being read. */
  const [executors, setExecutors] = useState(/** @type {string[] | null} */ (null));

  // The executors are the nodes whose card lists exec.submit; resolve, the hub's default, comes first.
  useEffect(() => {
    fleet().then(
      (snap) => {
        const names = snap.nodes
          .filter((n) => n.skills.some((s) => s.id === 'exec.submit'))
          .map((n) => n.name);
        setExecutors(names);
        setExecutor((e) => e || (names.includes('resolve') ? 'resolve' : (names[0] ?? '')));
      },
      () => setExecutors([]),
    );
  }, []);
  return [executors, executor, setExecutor];
}
