/**
 * @module hub/http/login-deps — what the console's sign-in is made with: the access policy, the
 * token book, the one-time tickets, the throttle and the log.
 */

import type { TokenBook } from '../../lib/auth/tokens.ts';
import type { Log } from '../../lib/log.ts';
import type { HubAccess } from './access.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import type { ConsoleTickets } from './tickets.ts';

export interface LoginDeps {
  access: HubAccess;
  tokens?: TokenBook;
  tickets: ConsoleTickets;
  throttle: SignInThrottle;
  log: Log;
}
