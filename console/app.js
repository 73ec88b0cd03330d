/**
 * @module console/app — the console shell: a navigation bar (folded behind a Menu button on narrow
 * screens) and a hash router (#/fleet, #/ask, …). Each page is a module in pages/ exporting a
 * component, loaded when first opened; no router or state library.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { MESH_PROJECT } from './constants.js';
import { MeshBadge } from './mesh-panel.js';
import { PAGES } from './pages/index.js';
import { SignedInAs } from './signed-in-as.js';

/** @typedef {import('preact').FunctionComponent} Component */

const FIRST = /** @type {import('./types').Page} */ (PAGES[0]);

function useRoute() {
  const read = () => location.hash.replace(/^#\/?/, '').split('?')[0] || FIRST.id;
  const [route, setRoute] = useState(read());
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    // The hash may have changed between the first render and this effect (Preact runs effects
    // after paint): read it again, or that navigation would be lost.
    on();
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const page = PAGES.find((p) => p.id === route) ?? FIRST;
  const [shown, setShown] = useState(/** @type {{id: string, Page: Component} | null} */ (null));
  const [failed, setFailed] = useState('');
  // The menu remembers the page it was opened on, so following a link closes it
  // in the same render that shows the new page (an effect would close it a frame later).
  const [menuOn, setMenuOn] = useState('');
  const menu = menuOn === page.id;

  useEffect(() => {
    let alive = true;
    setFailed('');
    document.title = `${page.title} · lume-a2a console`;
    page.load().then(
      (Page) => alive && setShown({ id: page.id, Page }),
      (e) => alive && setFailed(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      alive = false;
    };
  }, [page.id]);

  const Page = shown?.id === page.id ? shown.Page : null;
  return html`
    <header class=${menu ? 'menu-open' : ''}>
      <h1>lume-a2a</h1>
      <button type="button" class="menu secondary" aria-expanded=${menu ? 'true' : 'false'} aria-controls="nav" onClick=${() => setMenuOn(menu ? '' : page.id)}>
        ${menu ? 'Close menu' : `Menu · ${page.title}`}
      </button>
      <nav id="nav" aria-label="Pages">${PAGES.map(
        (p) => html`
        <a href=${`#/${p.id}`} class=${p === page ? 'active' : ''} aria-current=${p === page ? 'page' : undefined} data-page=${p.id} onClick=${() => setMenuOn('')}>${p.title}</a>`,
      )}
      </nav>
      <${MeshBadge} project=${MESH_PROJECT} />
      <${SignedInAs} />
    </header>
    <main id="main" data-page=${page.id}>
      ${failed ? html`<p class="error">This page could not be loaded: ${failed}</p>` : Page ? html`<${Page} />` : html`<p class="muted">Loading…</p>`}
    </main>
  `;
}

const root = document.getElementById('app');
if (!root) throw new Error('index.html has no #app element');
render(html`<${App} />`, root);
