/**
 * @module console/session-key — the console session's page key. The hub hands it over once, at sign-in
 * (signed-in.js stores it); the console sends it in `X-Lume-Key` on every request (and in the
 * query of its event streams, which cannot send headers). The key lives in this origin's storage,
 * which no server on another port of this host can read, so the session cookie it is sent beside
 * is worth nothing to one that has copied the cookie.
 */

export const KEY_ITEM = 'lume-key';
const HEADER = 'x-lume-key';
const PARAM = 'lume_key';

/** @returns {string} the page key, or '' when this browser has not signed in here. */
export const sessionKey = () => localStorage.getItem(KEY_ITEM) ?? '';

/**
 * The headers with the page key added.
 * @param {Record<string, string>} headers
 * @returns {Record<string, string>}
 */
export const withKey = (headers) => ({ ...headers, [HEADER]: sessionKey() });

/**
 * An event stream's URL with the page key in its query.
 * @param {string} path
 */
export function keyedUrl(path) {
  const url = new URL(path, location.origin);
  url.searchParams.set(PARAM, sessionKey());
  return `${url.pathname}${url.search}`;
}

/** Forgets the key (at sign-out). */
export const forgetKey = () => localStorage.removeItem(KEY_ITEM);
