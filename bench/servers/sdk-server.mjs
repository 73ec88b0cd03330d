// The official @a2a-js/sdk server (Express app) with an agent equivalent to the one
// bench/servers/node-server.ts runs: working, one artifact, completed. Its tasks are kept in
// memory, or, when SDK_DATABASE_URL names a PostgreSQL database (its `tasks` table made by the
// SDK's own `a2a-db upgrade`), in the SDK's DatabaseTaskStore through kysely and pg.
// Plain JavaScript so it runs unchanged on Node and on Bun. Prints "LISTENING <port>".
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

const TASK_STATE_SUBMITTED = 1,
  TASK_STATE_WORKING = 2,
  TASK_STATE_COMPLETED = 3;
const now = () => new Date().toISOString();
const textPart = (value) => ({
  content: { $case: 'text', value },
  filename: '',
  mediaType: 'text/plain',
  metadata: undefined,
});

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const status = (state) => ({ state, timestamp: now(), message: undefined });
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TASK_STATE_WORKING),
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'a1',
          name: 'echo',
          description: '',
          parts: [textPart('echo')],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask() {},
};

const port = Number(process.env.PORT ?? 0);
const card = {
  name: 'sdk-bench',
  description: 'SDK benchmark agent',
  version: '1.0.0',
  supportedInterfaces: [
    { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
  ],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'echo',
      description: 'echo',
      tags: ['echo'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  securitySchemes: {},
  securityRequirements: [],
  signatures: [],
};
async function taskStore(url) {
  if (!url) return new InMemoryTaskStore();
  const [{ Kysely, PostgresDialect }, pg, { DatabaseTaskStore }] = await Promise.all([
    import('kysely'),
    import('pg'),
    import('@a2a-js/sdk/server/database'),
  ]);
  const pool = new pg.default.Pool({ connectionString: url, max: 10 });
  return new DatabaseTaskStore(new Kysely({ dialect: new PostgresDialect({ pool }) }));
}

const store = await taskStore(process.env.SDK_DATABASE_URL);
const handler = new DefaultRequestHandler(card, store, executor);
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use(
  '/a2a',
  jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);
const server = app.listen(port, '127.0.0.1', () =>
  console.log(`LISTENING ${server.address().port}`),
);
