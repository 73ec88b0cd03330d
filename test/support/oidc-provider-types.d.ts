/**
 * The part of oidc-provider the tests use to run a real OpenID provider: it ships no types, and
 * its community types are not a dependency.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(
      req: IncomingMessage,
      res: ServerResponse,
    ): Promise<{
      uid: string;
      prompt: { name: string; details: Record<string, unknown> };
      params: Record<string, unknown>;
    }>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: new (o: {
      accountId: string;
      clientId: string;
    }) => {
      addOIDCScope(scope: string): void;
      addResourceScope(resource: string, scope: string): void;
      save(): Promise<string>;
    };
  }
}
