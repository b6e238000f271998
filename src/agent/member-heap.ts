import v8 from 'node:v8'

/*
 * The V8 heap settings of a process that is one member and nothing else (`swarm agent` in a pane),
 * set once at its start. Never called where members share a process (the in-process leader): the
 * settings are the whole process's.
 */

/**
 * V8's memory reducer, once the old generation of a process that never had a full GC grew by 1 MB
 * (a teammate's does while it starts), waits until the allocation rate reads low and then runs up
 * to three memory-reducing mark-compacts 0.5 s apart. In a teammate the first gives the
 * turn's garbage back (16.9 → 12.4 MB of heap measured), the other two find ~0.2 MB and nothing, and
 * all three cost ~100 ms of CPU with their helper threads. With 64 teammates on 2 cores the rate
 * reads low only 1–2 minutes after the turn, so every teammate's three GCs fell in the idle team's
 * window: 7 % of a core (bench:scale tmux@64, issue 25). One GC still gives the garbage back; what it
 * keeps is ~3 MB of emptied pages the next two would have uncommitted, until the next GC.
 * The flag is read when the reducer plans its GCs, so setting it at run time takes effect.
 */
export function tuneMemberHeap(): void {
  v8.setFlagsFromString('--memory-reducer-single-gc')
}
