/**
 * @module console/mesh-send — the quick panel's identity and send form (console/mesh-panel.js shows them):
 * the hub holds a mesh presence for the signed-in visitor (hub/mesh/console-presence.ts), named
 * after their principal; the form sends through it, to one peer or to the whole project. An
 * anonymous visitor sees a sign-in link instead of the form.
 */
import { useEffect, useState } from 'preact/hooks';
import { meshIdentity, meshSend, refused } from './api.js';
import { valueTo } from './forms.js';
import { html } from './html.js';

/**
 * @param {{ project: string, live: boolean, peers: string[] }} props
 */
export function MeshSend({ project, live, peers }) {
  const [me, setMe] = useState(/** @type {import('./types').MeshIdentity | null} */ (null));
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState(/** @type {{ error: boolean, text: string } | null} */ (null));
  const refresh = () => meshIdentity(project).then(setMe, () => setMe(null));
  useEffect(() => void refresh(), [project]);

  /** @param {Event} e */
  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    const r = await meshSend(project, to, text);
    setBusy(false);
    if (refused(r)) {
      const signIn = r.error.code === 'CONSOLE_MESH_SIGN_IN' || r.error.code === 'UNAUTHENTICATED';
      setNote({ error: true, text: signIn ? 'Sign in to send.' : r.error.message });
      if (signIn) setMe((m) => m && { ...m, signedIn: false, name: null, present: false });
      return;
    }
    setText('');
    const n = r.result.recipients.length;
    setNote({ error: false, text: `sent as ${r.result.name} to ${n} present` });
    void refresh();
  }

  const others = peers.filter((p) => p !== me?.name);
  return html`
    <dl class="mesh-identity">
      <dt>project</dt><dd>${project}</dd>
      <dt>roster name</dt><dd class="mesh-name">${
        me?.name
          ? `${me.name}${me.present ? ' (present through the hub)' : ' (joins with your first message)'}`
          : 'none (not signed in)'
      }</dd>
      <dt>hub</dt><dd>${me?.hub ? `${me.hub} at ` : ''}${location.origin}</dd>
      <dt>live view</dt><dd>${live ? 'watching' : 'not connected to the hub'}</dd>
    </dl>
    ${
      me && !me.signedIn
        ? html`<p class="mesh-sign-in">${note?.error ? html`<span class="error" role="alert">${note.text}</span> ` : ''}<a href=${`/login?${new URLSearchParams({ next: `/${location.hash}` })}`}>Sign in</a> to send messages.</p>`
        : html`<form class="mesh-send" onSubmit=${submit}>
        <label>To <select name="to" value=${to} onChange=${valueTo(setTo)}>
          <option value="">everyone in ${project}</option>
          ${others.map((p) => html`<option value=${p}>${p}</option>`)}
        </select></label>
        <label class="grow"><input type="text" name="text" aria-label="Message" placeholder="Message" maxlength="8000" required value=${text} onInput=${valueTo(setText)} /></label>
        <button type="submit" disabled=${busy || !text.trim()}>Send</button>
        ${note ? html`<p class=${note.error ? 'error' : 'muted'} role="status">${note.text}</p>` : ''}
      </form>`
    }`;
}
