/**
 * Test support: a console session as a browser gets one, outside a browser. It opens a fresh
 * one-time console URL of the hub (`hub.consoleUrl()`), keeps the cookie the answer sets and the
 * page key its page carries, and gives the headers a console page sends with each request.
 */

export interface ConsoleSession {
  /** The cookie's `name=value`. */
  cookie: string;
  /** The page key (`X-Lume-Key`). */
  key: string;
  /** Cookie and key headers, to spread into a request's headers. */
  headers: { cookie: string; 'x-lume-key': string };
}

/** Signs in at a console URL (`…/login?ticket=…`). @throws Error when the hub refuses it. */
export async function signInAt(url: string): Promise<ConsoleSession> {
  const res = await fetch(url, { redirect: 'manual' });
  const page = await res.text();
  const set = res.headers.get('set-cookie');
  const key = /<meta name="lume-key" content="([^"]+)">/.exec(page)?.[1];
  if (res.status !== 200 || !set || !key)
    throw new Error(`sign-in at the console URL answered ${res.status}: ${page.slice(0, 200)}`);
  const cookie = set.split(';')[0]!;
  return { cookie, key, headers: { cookie, 'x-lume-key': key } };
}

/** Signs in through a fresh console URL of an in-process hub. */
export const consoleSession = (hub: { consoleUrl(): string }) => signInAt(hub.consoleUrl());
