/**
 * @module hub/http/login-pages — what the console's sign-in answers a browser: the sign-in page (a
 * ticket to confirm, the trusted issuer's button, or a token to type), the signed-in page that hands over the page key, and
 * redirects, all uncached and unframed; the path to return to is always one of this hub's.
 */

/** Where to go after signing in: a path of this hub (`/`, `/#/tasks`), never another site. */
export function localPath(next: string | null | undefined): string {
  return next && next.length <= 512 && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a form's POST says `Origin: null`.
  'referrer-policy': 'same-origin',
};

const shell = (body: string, head = '') => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · lume-a2a console</title>
  <link rel="stylesheet" href="/style.css">
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">${head}
</head>
<body>
  <main class="login">
    <h1>lume-a2a console</h1>
${body}
  </main>
</body>
</html>
`;

interface PageOptions {
  note?: string;
  next?: string;
  /** A ticket a link from another site carried: kept for a same-site click, not used. */
  ticket?: string;
  /** The trusted issuer the console signs in through (hub/http/oidc-login.ts), when there is one. */
  issuer?: string;
  status?: number;
  headers?: Record<string, string>;
}

/** The issuer's host as the button names it (`login.example.com`, `127.0.0.1:9000`). */
const issuerLabel = (issuer: string) => {
  const u = new URL(issuer);
  return u.host + (u.pathname === '/' ? '' : u.pathname);
};

/** The sign-in page: a console URL's ticket to confirm, the issuer's button, or a token to type. */
export function signInPage(o: PageOptions = {}): Response {
  const next = escapeHtml(o.next ?? '/');
  const viaIssuer = o.issuer
    ? `    <form method="post" action="/login/oidc" class="issuer">
      <input type="hidden" name="next" value="${next}">
      <button type="submit">Sign in with ${escapeHtml(issuerLabel(o.issuer))}</button>
    </form>
`
    : '';
  const confirm = o.ticket
    ? `    <form method="post" action="/login" class="ticket">
      <input type="hidden" name="ticket" value="${escapeHtml(o.ticket)}">
      <input type="hidden" name="next" value="${next}">
      <button type="submit">Continue to the console</button>
    </form>
    <p class="hint">A link from another page brought you here; continue only if you opened it yourself.</p>
`
    : '';
  return new Response(
    shell(`${confirm}${viaIssuer}    <p class="hint">${o.issuer ? 'Or open' : 'Open'} the console URL the hub printed when it started, or run <code>bun run console-url</code> on the hub's machine for a new one. Or sign in with an access token:</p>
    <form method="post" action="/login">
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="off" required maxlength="256">
      <input type="hidden" name="next" value="${next}">
      <button type="submit">Sign in</button>
    </form>
    <p class="hint">Make a token with <code>bun run keys token add &lt;name&gt;</code>. Signed in already? <a href="/">Open the console</a>.</p>
    ${o.note ? `<p class="error" role="alert">${escapeHtml(o.note)}</p>` : ''}`),
    { status: o.status ?? 200, headers: { ...HTML_HEADERS, ...o.headers } },
  );
}

/** What a signed-in browser is answered: its cookie, and its page key for the console to keep. */
export function signedInPage(key: string, next: string, cookie: string): Response {
  const res = new Response(
    shell(
      `    <p>Signed in. <a id="next" href="${escapeHtml(next)}">Open the console</a>.</p>
    <noscript><p class="error">The console needs JavaScript.</p></noscript>`,
      `\n  <meta name="lume-key" content="${escapeHtml(key)}">\n  <meta name="lume-next" content="${escapeHtml(next)}">\n  <script type="module" src="/signed-in.js"></script>`,
    ),
    { headers: HTML_HEADERS },
  );
  res.headers.append('set-cookie', cookie);
  return res;
}

export const redirect = (to: string, cookie?: string) =>
  new Response(null, {
    status: 303,
    headers: {
      location: to,
      'cache-control': 'no-store',
      ...(cookie ? { 'set-cookie': cookie } : {}),
    },
  });
