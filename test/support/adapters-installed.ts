/**
 * Setup of both projects: loads the adapter registry, as every swarm command that checks a
 * permission or builds a sandbox does, so the agent CLIs' protected config dirs are installed
 * (sandbox/protected.ts refuses to run without them).
 */
import '../../src/adapters/registry.js'
