/**
 * The environment a function that touches swarm's files or processes takes: where HOME,
 * SWARM_HOME, TMUX_TMPDIR and the provider variables are read from. One name for it everywhere.
 */
export type Env = NodeJS.ProcessEnv
