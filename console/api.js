/**
 * @module api — the console's only way to the hub. Reads are plain GETs; every POST is JSON to the
 * same origin (the hub refuses anything else), and never carries a key: the hub signs server-side.
 */

/**
 * GET a JSON document; on failure throws an Error with the hub's message whose `code` is the
 * hub's error code (`HTTP_<status>` when the answer carries none).
 */
export async function get(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  if (res.ok) return body;
  const err = new Error(body?.error?.message ?? `HTTP ${res.status}`);
  /** @type {any} */ (err).code = body?.error?.code ?? `HTTP_${res.status}`;
  throw err;
}

/** POST a JSON body; answers the parsed body, with `ok: false` bodies passed through for the page to show. */
export async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json().catch(() => ({ ok: false, error: { code: 'BAD_ANSWER', message: `HTTP ${res.status}` } }));
}

/** Runs one of the hub's own capabilities (POST /api/hub). */
export const hub = (skill, args = {}) => post('/api/hub', { skill, args });
