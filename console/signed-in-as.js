/**
 * @module console/signed-in-as — the header's "signed in as …" and its Sign out button. Signing out ends
 * the session on the hub (the page key proves it is this page's), forgets the key, and goes to
 * the sign-in page.
 */
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { forgetKey, withKey } from './session-key.js';

export function SignedInAs() {
  const [who, setWho] = useState('');
  useEffect(() => {
    fetch('/api/session', { headers: withKey({ accept: 'application/json' }) })
      .then((r) => (r.ok ? r.json() : undefined))
      .then((b) => b?.principal?.name && setWho(String(b.principal.name)))
      .catch(() => {});
  }, []);
  const signOut = async () => {
    await fetch('/logout', { method: 'POST', headers: withKey({}), redirect: 'manual' }).catch(
      () => {},
    );
    forgetKey();
    location.assign('/login');
  };
  return html`
    <div class="signout">
      ${who ? html`<span class="who" title="The principal this console acts as">Signed in as <strong>${who}</strong></span>` : ''}
      <button type="button" class="secondary" onClick=${signOut}>Sign out</button>
    </div>
  `;
}
