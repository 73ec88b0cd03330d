// The framework's ceiling: a bare Elysia app that parses a JSON body and sends it back.
// Prints "LISTENING <port>".
import { Elysia } from 'elysia';

const app = new Elysia({ normalize: false })
  .post('/a2a', ({ body }) => body)
  .listen({ hostname: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`LISTENING ${app.server!.port}`);
