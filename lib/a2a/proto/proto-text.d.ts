/**
 * @module lib/a2a/proto/proto-text — a `.proto` file imported `with { type: 'text' }` is its text
 * (Bun's text loader); schema.ts imports a2a.proto so.
 */
declare module '*.proto' {
  const text: string;
  export default text;
}
