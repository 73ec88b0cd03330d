/**
 * @module app — the console shell: a navigation bar and a hash router (#/fleet, #/ask, …). Each
 * page is a module in pages/ exporting a component; no router or state library.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { Fleet } from './pages/fleet.js';
import { PAGES } from './pages/index.js';

/** @type {import('./types').Page} */
const FLEET = { id: 'fleet', title: 'Fleet', component: Fleet };
/** @type {import('./types').Page[]} */
const ALL = [FLEET, ...PAGES];

function useRoute() {
  const read = () => location.hash.replace(/^#\/?/, '').split('?')[0] || 'fleet';
  const [route, setRoute] = useState(read());
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const page = ALL.find((p) => p.id === route) ?? FLEET;
  const Page = page.component;
  return html`
    <header>
      <h1>lume-a2a</h1>
      <nav>${ALL.map((p) => html`<a href=${`#/${p.id}`} class=${p === page ? 'active' : ''} data-page=${p.id}>${p.title}</a>`)}</nav>
      <form class="signout" method="post" action="/logout"><button type="submit">Sign out</button></form>
    </header>
    <main data-page=${page.id}><${Page} /></main>
  `;
}

const root = document.getElementById('app');
if (!root) throw new Error('index.html has no #app element');
render(html`<${App} />`, root);
