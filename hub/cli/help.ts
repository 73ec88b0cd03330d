/**
 * @module hub/cli/help — `--help` (or `-h`) for the hub's commands: the usage on stdout and exit
 * 0, checked before the command reads its settings or starts anything, so asking for help never
 * starts a hub, makes a ticket or fails on a missing argument.
 */

/** Prints `usage` and exits 0 when the command line asks for help; returns otherwise. */
export function exitOnHelp(usage: string, argv: readonly string[] = process.argv.slice(2)): void {
  if (!argv.some((a) => a === '--help' || a === '-h')) return;
  console.log(usage);
  process.exit(0);
}
