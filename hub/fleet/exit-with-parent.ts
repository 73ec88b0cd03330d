/**
 * @module hub/fleet/exit-with-parent — preloaded into every process `bun run fleet` starts
 * (`bun --preload`): the supervisor gives each child a stdin pipe it never writes to, and when
 * that pipe closes (the supervisor exited, or was killed with -9) the child stops itself with
 * SIGTERM, so its own clean shutdown runs. Bun has no PR_SET_PDEATHSIG; a closing pipe is
 * immediate and needs no timer.
 */

void (async () => {
  const reader = Bun.stdin.stream().getReader();
  try {
    while (!(await reader.read()).done) {}
  } catch {}
  process.kill(process.pid, 'SIGTERM');
})();
