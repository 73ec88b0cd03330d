/**
 * @module lib/a2a/proto/declarations — makes lib/a2a/proto/declarations.json, the parsed
 * declarations of `a2a.proto` and of the google/protobuf and google/rpc types its binding uses, so a
 * node reads them as data and never parses the schema's text at start. `bun
 * lib/a2a/proto/declarations.ts` writes the file again; test/proto-declarations.test.ts checks
 * that the shipped file is what this gives.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
// Imported as text (declared in proto-text.d.ts).
import a2aProto from './a2a.proto' with { type: 'text' };
import { parseProto, type ProtoFile } from './parse.ts';

/** The parts of google/protobuf and google/rpc this binding reads and writes. */
const GOOGLE_PROTOBUF = `
package google.protobuf;
message Struct { map<string, Value> fields = 1; }
message Value {
  oneof kind {
    NullValue null_value = 1; double number_value = 2; string string_value = 3;
    bool bool_value = 4; Struct struct_value = 5; ListValue list_value = 6;
  }
}
enum NullValue { NULL_VALUE = 0; }
message ListValue { repeated Value values = 1; }
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message Empty {}
message Any { string type_url = 1; bytes value = 2; }
`;
const GOOGLE_RPC = `
package google.rpc;
message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
message BadRequest {
  message FieldViolation { string field = 1; string description = 2; }
  repeated FieldViolation field_violations = 1;
}
`;

/** The file's path and its text as the generator writes it (two-space JSON, a final newline). */
export const DECLARATIONS_FILE = join(import.meta.dir, 'declarations.json');

/** The declarations, parsed from the texts: google.protobuf, google.rpc, then lf.a2a.v1 (last). */
export function declarationsText(): string {
  const files: ProtoFile[] = [GOOGLE_PROTOBUF, GOOGLE_RPC, a2aProto].map(parseProto);
  return `${JSON.stringify(files, null, 2)}\n`;
}

if (import.meta.main) writeFileSync(DECLARATIONS_FILE, declarationsText());
