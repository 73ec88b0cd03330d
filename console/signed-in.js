/**
 * @module console/signed-in — runs on the page the hub answers a sign-in with: keeps the session's page
 * key (a `<meta name="lume-key">` that page alone carries) in this origin's storage, then opens
 * the console where the sign-in meant to go.
 */
import { KEY_ITEM } from './session-key.js';

const meta = (/** @type {string} */ name) =>
  document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

const key = meta('lume-key');
if (key) localStorage.setItem(KEY_ITEM, key);
const next = meta('lume-next');
location.replace(next.startsWith('/') && !next.startsWith('//') ? next : '/');
