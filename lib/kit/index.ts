/**
 * @module lib/kit/index — everything the package `lume-a2a` offers, from one import: the node library, the
 * A2A client, the signed peer channel, the mesh client and the fleet file reader.
 */

export * from './node.ts';
export * from './client.ts';
export * from './peer.ts';
export * from './mesh.ts';
export * from './fleet.ts';
