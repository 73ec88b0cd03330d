// Runs the server module named by NODE_SERVER (default: the benchmark node) and ends normally on
// SIGTERM, so a profiler started with `--cpu-prof` writes its profile (bench/profile-send.ts).
export {};
process.on('SIGTERM', () => process.exit(0));
await import(process.env.NODE_SERVER ?? './node-server.ts');
