/**
 * @module console/api — the console's only way to the hub, one function per route it uses. Reads are
 * plain GETs; every POST is JSON to the same origin and never carries a key: the hub signs
 * server-side. The hub's tasks go through its A2A HTTP+JSON binding, as any A2A client's would.
 * What changes while a page is open arrives over Server-Sent Events (`*Stream`, `meshWatch`).
 * Every request carries the session's page key (session-key.js). A 401 means the hub's access policy wants a sign-in: the console goes to the hub's `/login`.
 */
import { A2A_VERSION } from './constants.js';
import { keyedUrl, withKey } from './session-key.js';

/**
 * @typedef {import('./types').ApiError} ApiError
 * @typedef {import('./types').HubResults} HubResults
 * @typedef {import('./types').Refusal} Refusal
 * @typedef {import('./types').Task} Task
 */

/** A request the hub refused: `code` is the hub's error code (`HTTP_<status>` when it sent none). */
export class RequestError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * What a page shows for anything a request threw: the hub's code, or `NETWORK` when the hub
 * could not be reached at all.
 * @param {unknown} err
 * @returns {ApiError}
 */
export function toApiError(err) {
  if (err instanceof RequestError) return { code: err.code, message: err.message };
  return { code: 'NETWORK', message: err instanceof Error ? err.message : String(err) };
}

/**
 * Sends the browser to the hub's sign-in page when the hub answered 401 (no session, or an
 * expired one), to come back to the page it was on.
 * @param {Response} res
 */
function signInIfAsked(res) {
  if (res.status === 401)
    location.assign(`/login?${new URLSearchParams({ next: `/${location.hash}` })}`);
}

/**
 * The parsed JSON body of a response, or `undefined` when it has none. The answer's shape is the
 * route's (see types.d.ts): the caller's declared return type names it.
 * @template T
 * @param {Response} res
 * @returns {Promise<T | undefined>}
 */
const bodyOf = (res) => res.json().catch(() => undefined);

/**
 * GET a JSON document of the hub API or the mesh; a refusal throws a RequestError.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function get(path) {
  const res = await fetch(path, { headers: withKey({ accept: 'application/json' }) });
  signInIfAsked(res);
  /** @type {T & { error?: Partial<ApiError> } | undefined} */
  const body = await bodyOf(res);
  if (res.ok && body !== undefined) return body;
  throw new RequestError(
    body?.error?.code ?? `HTTP_${res.status}`,
    body?.error?.message ?? `HTTP ${res.status}`,
  );
}

/**
 * POST a JSON body. Answers the parsed body, or, when the hub refuses, a Refusal carrying the
 * hub's code (`{ok: false, error}` from the hub API, `{error}` from the mesh) for the page to show.
 * @template T
 * @param {string} path
 * @param {object} body
 * @returns {Promise<T | Refusal>}
 */
async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: withKey({ 'content-type': 'application/json' }),
    body: JSON.stringify(body),
  });
  signInIfAsked(res);
  /** @type {T & { error?: Partial<ApiError> } | undefined} */
  const answer = await bodyOf(res);
  // The mesh answers most refusals 200 with `{error}`, so the body decides, not only the status.
  const error = answer?.error;
  if (res.ok && answer !== undefined && !error) return answer;
  return {
    ok: false,
    error: {
      code: error?.code ?? `HTTP_${res.status}`,
      message: error?.message ?? `HTTP ${res.status}`,
    },
  };
}

/**
 * Whether a POST was refused; narrows the answer either way.
 * @template T
 * @param {T | Refusal} answer
 * @returns {answer is Refusal}
 */
export const refused = (answer) =>
  typeof answer === 'object' && answer !== null && 'ok' in answer && answer.ok === false;

// ---- the hub API ----

/** @returns {Promise<import('./types').FleetSnapshot>} */
export const fleet = () => get('/api/fleet');

/** The fleet pushed every few seconds: one `FleetFrame` per message, the first with the kept history. */
export const fleetStream = () => new EventSource(keyedUrl('/api/fleet/stream'));

/**
 * A page of the call trace, newest first.
 * @param {URLSearchParams} query limit, before, from, to, capability, outcome
 * @returns {Promise<import('./types').TracePage>}
 */
export const trace = (query) => get(`/api/trace?${query}`);

/** The stream of new trace records (one JSON record per message). */
export const traceStream = () => new EventSource(keyedUrl('/api/trace/stream'));

/**
 * Ask Agent: one question, planned across the fleet.
 * @param {string} question
 * @returns {Promise<import('./types').AskAnswer | Refusal>}
 */
export const ask = (question) => post('/api/ask', { question });

/**
 * Runs one of the hub's own capabilities (POST /api/hub).
 * @template {keyof HubResults} K
 * @param {K} skill
 * @param {object} [args]
 * @returns {Promise<import('./types').HubAnswer<HubResults[K]> | Refusal>}
 */
export const hub = (skill, args = {}) => post('/api/hub', { skill, args });

/** The hub's task list (a `TaskPage`) whenever it changes. */
export const tasksStream = () => new EventSource(keyedUrl('/api/tasks/stream'));

/**
 * Whether the hub has a model configured (a negotiation "with models" needs one) and it answers.
 * @returns {Promise<import('./types').HubModel>}
 */
export const hubModel = () => get('/api/model');

/** @returns {Promise<{negotiations: import('./types').NegotiationSummary[]}>} */
export const negotiations = () => get('/api/negotiations');

/**
 * @param {string} id
 * @returns {Promise<import('./types').Negotiation>}
 */
export const negotiation = (id) => get(`/api/negotiations/${encodeURIComponent(id)}`);

// ---- the mesh ----

/** @returns {Promise<{result: {projects: import('./types').Project[]}} | Refusal>} */
export const listProjects = () => post('/api/projects.list', {});

/**
 * @param {Record<string, string>} project name, and optionally displayName and description
 * @returns {Promise<{result: {project: import('./types').Project}} | Refusal>}
 */
export const createProject = (project) => post('/api/projects.create', project);

/**
 * @param {string} name
 * @returns {Promise<{result: {deleted: boolean}} | Refusal>}
 */
export const deleteProject = (name) => post('/api/projects.delete', { name });

/**
 * @param {string} project
 * @returns {Promise<import('./types').Roster>}
 */
export const presence = (project) => get(`/v1/presence?${new URLSearchParams({ project })}`);

/**
 * A project's roster now and after each change, and each new message (`ProjectEvent`s).
 * @param {string} project
 */
export const meshWatch = (project) =>
  new EventSource(keyedUrl(`/v1/watch?${new URLSearchParams({ project })}`));

/**
 * A page of a project's messages.
 * @param {URLSearchParams} query project, limit, before, from
 * @returns {Promise<import('./types').HistoryPage>}
 */
export const history = (query) => get(`/v1/history?${query}`);

// ---- the hub's tasks, over the A2A HTTP+JSON binding ----

/**
 * One request to the binding, `A2A-Version: 1.0`. An error answer (AIP-193) throws a
 * RequestError whose code is the A2A reason (`TASK_NOT_FOUND`, …) or else the status name.
 * @template T
 * @param {'GET' | 'POST'} method
 * @param {string} path
 * @param {object} [body]
 * @returns {Promise<T>}
 */
async function a2a(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = withKey({ accept: 'application/json', 'A2A-Version': A2A_VERSION });
  if (body) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  signInIfAsked(res);
  /** @type {T & Partial<import('./types').A2AErrorBody> | undefined} */
  const answer = await bodyOf(res);
  if (res.ok && answer !== undefined) return answer;
  const error = answer?.error;
  const reason = error?.details?.find((d) => d.reason)?.reason;
  throw new RequestError(
    reason ?? error?.status ?? `HTTP_${res.status}`,
    error?.message ?? `HTTP ${res.status}`,
  );
}

/**
 * The newest tasks with their artifacts and last two messages; reading advances delegated ones.
 * @param {number} pageSize
 * @returns {Promise<import('./types').TaskPage>}
 */
export const listTasks = (pageSize) =>
  a2a(
    'GET',
    `/tasks?${new URLSearchParams({ pageSize: String(pageSize), includeArtifacts: 'true', historyLength: '2' })}`,
  );

/**
 * One task; reading a delegated task asks its executor how the job stands.
 * @param {string} id
 * @returns {Promise<Task>}
 */
export const getTask = (id) => a2a('GET', `/tasks/${encodeURIComponent(id)}`);

/**
 * Cancels a task (and a delegated task's job).
 * @param {string} id
 * @returns {Promise<Task>}
 */
export const cancelTask = (id) => a2a('POST', `/tasks/${encodeURIComponent(id)}:cancel`, {});

/** A random message id; `crypto.randomUUID` exists only on https and localhost pages. */
const randomId = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');

/**
 * Delegates a job: a SendMessage whose data part runs the hub's `task.delegate` (on `executor`,
 * the hub's default when absent; `taskId` continues a settled delegation with its earlier turns).
 * @param {import('./types').DelegateArgs} args
 * @returns {Promise<import('./types').SendAnswer>}
 */
export const delegate = (args) =>
  a2a('POST', '/message:send', {
    message: {
      messageId: randomId(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'task.delegate', args } }],
    },
  });

/**
 * Continues a task that asked for input: a follow-up message naming the task, with the answer as text.
 * @param {import('./types').Task} task
 * @param {string} text
 * @returns {Promise<import('./types').SendAnswer>}
 */
export const continueTask = (task, text) =>
  a2a('POST', '/message:send', {
    message: {
      messageId: randomId(),
      role: 'ROLE_USER',
      taskId: task.id,
      contextId: task.contextId,
      parts: [{ text }],
    },
  });
