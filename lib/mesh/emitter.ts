/** @module lib/mesh/emitter — a small typed event emitter; a throwing listener cannot break the emitter. */

export type Listener<T> = (event: T) => void;

export function createEmitter<Events extends Record<string, unknown>>(
  onListenerError?: (e: unknown) => void,
) {
  const listeners = new Map<keyof Events, Set<Listener<never>>>();
  return {
    /** Subscribes; returns the unsubscribe function. */
    on<K extends keyof Events>(type: K, fn: Listener<Events[K]>): () => void {
      let set = listeners.get(type);
      if (!set) listeners.set(type, (set = new Set()));
      set.add(fn as Listener<never>);
      return () => void set.delete(fn as Listener<never>);
    },
    emit<K extends keyof Events>(type: K, event: Events[K]): void {
      for (const fn of listeners.get(type) ?? []) {
        try {
          (fn as Listener<Events[K]>)(event);
        } catch (e) {
          onListenerError?.(e);
        }
      }
    },
  };
}
