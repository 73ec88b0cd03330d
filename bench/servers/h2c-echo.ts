// The gRPC transport's ceiling on Bun: a bare node:http2 (h2c) server that reads one request and
// answers every call with an empty message and grpc-status 0, no decoding, no engine.
// Prints "LISTENING <port>".
import http2 from 'node:http2';

const empty = new Uint8Array(5);
const server = http2.createServer();
server.on('stream', (stream: http2.ServerHttp2Stream) => {
  stream.on('data', () => {});
  stream.on('end', () => {
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc' },
      { waitForTrailers: true },
    );
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(empty);
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : 0}`);
});
