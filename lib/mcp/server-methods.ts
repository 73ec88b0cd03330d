/**
 * @module lib/mcp/server-methods — what each MCP method of lib/mcp/server.ts does with its checked
 * parameters (lib/mcp/server-params.ts): list and call tools, list, read and subscribe to
 * resources, list and get prompts, complete an argument, set the log level. A method the server
 * was given nothing for is unknown (undefined).
 */

import { jsonBytes } from '../limits.ts';
import { answer, failure, rpcError, type RpcAnswer, type RpcError, type RpcId } from './jsonrpc.ts';
import { paramHeaderMismatch } from './param-headers.ts';
import { RPC } from './protocol.ts';
import type { McpCallContext, McpServerOptions, ToolRefusal } from './server-types.ts';
import type { McpSession } from './sessions.ts';
import { offerAnswer, taskMethod } from './task-methods.ts';
import { isTaskOffer } from './tasks.ts';
import { completeParams, levelParam, promptParams, toolParams, uriParam } from './server-params.ts';

const bad = (id: RpcId, message: string, reason = 'MCP_BAD_PARAMS') =>
  failure(id, rpcError(RPC.INVALID_PARAMS, message, reason));

/** `resources/subscribe` and `resources/unsubscribe`: the session's set, at most `limit` URIs. */
function subscribe(
  limit: number,
  id: RpcId,
  p: Record<string, unknown>,
  session: McpSession,
  on: boolean,
) {
  const uri = uriParam(p);
  if (uri === undefined) return bad(id, 'params.uri must be a resource URI');
  const subs = session.subscriptions;
  if (on && !subs.has(uri) && subs.size >= limit)
    return bad(
      id,
      `a session subscribes to at most ${limit} resources`,
      'MCP_TOO_MANY_SUBSCRIPTIONS',
    );
  if (on) subs.add(uri);
  else subs.delete(uri);
  return answer(id, {});
}

/** A tool's refusal as the protocol's error: invalid params (-32602) or a missing capability (-32021). */
function refused(id: RpcId, r: ToolRefusal): RpcAnswer {
  if (r.refuse === 'invalid-params') return bad(id, r.message);
  return failure(id, {
    code: RPC.MISSING_CLIENT_CAPABILITY,
    message: r.message,
    data: { code: 'MCP_MISSING_CAPABILITY', requiredCapabilities: r.requiredCapabilities },
  } as RpcError);
}

/** Over the stateless revision, the `Mcp-Param-*` headers checked against the tool's arguments. */
async function paramMismatch(
  opts: McpServerOptions,
  id: RpcId,
  call: { name: string; args: Record<string, unknown> },
  ctx: McpCallContext,
): Promise<RpcAnswer | undefined> {
  if (!ctx.headers) return undefined;
  const tool = (await opts.tools.list(ctx)).find((t) => t.name === call.name);
  const why = tool && paramHeaderMismatch(tool.inputSchema, call.args, ctx.headers);
  return why
    ? failure(id, rpcError(RPC.HEADER_MISMATCH, `Header mismatch: ${why}`, 'MCP_HEADER_MISMATCH'))
    : undefined;
}

/** The runner of every method but `initialize`: the answer, or undefined for a method not served. */
export function methodRunner(opts: McpServerOptions) {
  async function toolsCall(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    const call = toolParams(p);
    if (typeof call === 'string') return bad(id, call);
    if (jsonBytes(call.args) > opts.limits.argumentBytes)
      return bad(
        id,
        `arguments must be under ${opts.limits.argumentBytes} bytes as JSON`,
        'MCP_ARGS_TOO_LARGE',
      );
    const mismatch = await paramMismatch(opts, id, call, ctx);
    if (mismatch) return mismatch;
    const result = await opts.tools.call(call.name, call.args, ctx);
    if (!result) return bad(id, `Unknown tool: ${call.name.slice(0, 64)}`, 'MCP_UNKNOWN_TOOL');
    if (isTaskOffer(result)) return offerAnswer(opts.tasks, id, result, ctx);
    return 'refuse' in result ? refused(id, result) : answer(id, result);
  }

  async function resourcesRead(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    const uri = uriParam(p);
    if (uri === undefined) return bad(id, 'params.uri must be a resource URI');
    const contents = await opts.resources.read(uri, ctx);
    if (!contents)
      return failure(
        id,
        rpcError(
          // 2026-07-28 says invalid params where the session revisions had their own code.
          ctx.session ? RPC.RESOURCE_NOT_FOUND : RPC.INVALID_PARAMS,
          `Resource not found: ${uri.slice(0, 128)}`,
          'MCP_UNKNOWN_RESOURCE',
        ),
      );
    return answer(id, { contents: [contents] });
  }

  async function promptsGet(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    const asked = promptParams(p);
    if (typeof asked === 'string') return bad(id, asked);
    const got = await opts.prompts!.get(asked.name, asked.args, ctx);
    if (got === undefined)
      return bad(id, `Unknown prompt: ${asked.name.slice(0, 64)}`, 'MCP_UNKNOWN_PROMPT');
    return typeof got === 'string' ? bad(id, got) : answer(id, got);
  }

  async function complete(id: RpcId, p: Record<string, unknown>, ctx: McpCallContext) {
    const asked = completeParams(p);
    if (typeof asked === 'string') return bad(id, asked);
    const c = await opts.completions!.complete(asked.ref, asked.argument, ctx);
    return answer(id, { completion: { ...c, values: c.values.slice(0, 100) } });
  }

  /** The method's answer; undefined: no such method here. */
  function run(
    id: RpcId,
    method: string,
    p: Record<string, unknown>,
    ctx: McpCallContext,
  ): Promise<RpcAnswer> | RpcAnswer | undefined {
    const session = ctx.session;
    // Methods of the session revisions only: 2026-07-28 removed them.
    if (session) {
      if (method === 'ping') return answer(id, {});
      if (method === 'logging/setLevel') {
        const level = levelParam(p);
        if (!level) return bad(id, 'params.level must be an MCP log level');
        session.logLevel = level;
        return answer(id, {});
      }
      if (method === 'resources/subscribe' || method === 'resources/unsubscribe')
        return opts.resources.subscribable
          ? subscribe(opts.limits.subscriptions, id, p, session, method === 'resources/subscribe')
          : undefined;
    }
    switch (method) {
      case 'tools/list':
        return opts.tools.list(ctx).then((tools) => answer(id, { tools }));
      case 'tools/call':
        return toolsCall(id, p, ctx);
      case 'resources/list':
        return opts.resources.list(ctx).then((resources) => answer(id, { resources }));
      case 'resources/templates/list':
        return Promise.resolve(opts.resources.templates?.(ctx) ?? []).then((resourceTemplates) =>
          answer(id, { resourceTemplates }),
        );
      case 'resources/read':
        return resourcesRead(id, p, ctx);
      case 'prompts/list':
        return opts.prompts?.list(ctx).then((prompts) => answer(id, { prompts }));
      case 'prompts/get':
        return opts.prompts && promptsGet(id, p, ctx);
      case 'completion/complete':
        return opts.completions && complete(id, p, ctx);
      default:
        return taskMethod(opts.tasks, id, method, p, ctx);
    }
  }

  return run;
}
