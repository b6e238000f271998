import { AsyncLocalStorage } from 'node:async_hooks'
import type { TeammateContext } from './types.js'

/**
 * The in-process teammate whose code is running. An EventEmitter listener runs in the emitter's
 * context, not the listener's: bind listeners (AsyncLocalStorage.bind) or keep one emitter per
 * teammate, or this answers for the wrong one.
 */
export const teammateStorage = new AsyncLocalStorage<TeammateContext>()

/** The in-process teammate this code runs for; undefined in the leader (and in other processes). */
export function currentTeammate(): TeammateContext | undefined {
  return teammateStorage.getStore()
}
