// Our node with the same agent as the SDK benchmark server (working, one artifact, completed),
// tasks in its task log in a temporary folder, or in PostgreSQL when TASKS_DATABASE_URL
// is set. Prints "LISTENING <port> GRPC <gRPC port>".
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../../lib/catalog/catalog.ts';
import { createNode } from '../../lib/node/create-node.ts';

const dataDir = process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'lume-a2a-bench-'));
const node = createNode(
  {
    name: 'bench',
    description: 'Benchmark agent',
    catalog: new Catalog([
      {
        id: 'bench.echo',
        name: 'echo',
        description: 'echo',
        tags: ['echo'],
        keywords: ['echo'],
        readOnly: true,
        args: {},
        run: () => ({}),
      },
    ]),
    agent: {
      handle(ctx) {
        ctx.working();
        ctx.artifact(
          { artifactId: 'a1', name: 'echo', parts: [{ text: 'echo', mediaType: 'text/plain' }] },
          { lastChunk: true },
        );
        ctx.complete();
      },
    },
  },
  {
    dataDir,
    port: Number(process.env.PORT ?? 0),
    ...(process.env.TASKS_DATABASE_URL ? { tasksDatabaseUrl: process.env.TASKS_DATABASE_URL } : {}),
  },
);
const running = await node.start();
console.log(`LISTENING ${running.port} GRPC ${running.grpcPort}`);
