/**
 * @module lib/a2a/proto/wire-types — the protobuf encoding's wire types (protobuf encoding guide):
 * part of the schema (each field's is fixed by its type), read by the gRPC codec in lib/a2a/grpc/.
 * Groups (3, 4) are deprecated and refused.
 */

export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;
