/**
 * @module lib/net/header-limit — how many bytes of a request's headers the kit's HTTP servers
 * read. Bun answers a request whose headers pass its limit with a bodiless 431 before any route
 * (16 KiB unless the process starts with `--max-http-header-size`), so an over-long header the
 * protocol names an error for (a 100 KB `A2A-Extensions`) would never reach the code that says
 * it. The kit's entry points (package.json scripts, `bun run fleet`'s children, `lume-node`)
 * start Bun with this flag; a process started without it says so once at start.
 */

import http from 'node:http';

/** Bytes of request headers a kit process reads; past it Bun answers 431 itself. */
const HTTP_HEADER_BYTES = 128 * 1024;

/** The Bun flag that gives a process that limit. */
export const HEADER_SIZE_FLAG = `--max-http-header-size=${HTTP_HEADER_BYTES}`;

/** What to warn about when this process reads fewer header bytes than that; undefined when it reads enough. */
export function headerLimitWarning(): string | undefined {
  const read = http.maxHeaderSize;
  return read >= HTTP_HEADER_BYTES
    ? undefined
    : `request headers past ${Math.round(read / 1024)} KiB get Bun's bodiless 431, not the coded error (an over-long A2A-Extensions is -32600): start bun with ${HEADER_SIZE_FLAG}`;
}
