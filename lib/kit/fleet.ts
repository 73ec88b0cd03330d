/**
 * @module lib/kit/fleet — the package's fleet file reader (`lume-a2a/fleet`): who the hub and the
 * nodes are and where they answer.
 */

export {
  fleetMember,
  loadFleet,
  parseFleet,
  type Fleet,
  type FleetMember,
} from '../config/fleet-file.ts';
