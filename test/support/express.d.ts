/**
 * The part of express the tests use to run the official @a2a-js/sdk server: express ships no
 * types, and @types/express is not a dependency.
 */
declare module 'express' {
  import type { Server } from 'node:http';

  interface Application {
    use(path: string, handler: unknown): Application;
    listen(port: number, host: string, ready: () => void): Server;
  }
  export default function express(): Application;
}
