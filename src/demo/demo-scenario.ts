import type { ScenarioInput } from '../loopback-model/scenario.js'

/** The demo project: a README that asks for a slugify function, and a test for it. */
export const DEMO_FILES: Record<string, string> = {
  'README.md': '# slugs\n\nWe need `slugify(text)` in `src/slug.js`: lower-case, words joined by `-`, nothing else.\n`node test.js` checks it.\n',
  'test.js':
    "const assert = require('node:assert')\nconst { slugify } = require('./src/slug.js')\n" +
    "assert.equal(slugify('Hello World'), 'hello-world')\nassert.equal(slugify('  Swarm: Agents, Teams!  '), 'swarm-agents-teams')\nconsole.log('2 tests passed')\n",
}

const SLUG_JS = "exports.slugify = (text) =>\n  text.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')\n"

/** What the implementer tells team-lead when its test run was denied, or failed (then nothing is reviewed). */
export const DENIED_REPORT = 'I could not run the tests: the command was denied at the prompt. Task #1 stays open, and nothing goes to review.'
export const FAILED_REPORT = '`node test.js` failed: task #1 stays open, and nothing goes to review.'

const tool = (name: string, input: Record<string, unknown>, text?: string) => ({
  content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use' as const, name, input }],
})

/**
 * What the built-in scripted model plays in `swarm demo`: a researcher that reads the project and
 * plans two tasks, an implementer that writes the code and runs the test (the one Bash call that
 * needs the lead's permission), a reviewer that reads it and reports PASS. Each waits for the
 * message that should wake it, so the order does not depend on timing. The implementer's script
 * branches on the test run's result: denied or failing, it tells team-lead and nothing is reviewed.
 */
export const DEMO_SCENARIO: ScenarioInput = {
  name: 'swarm-demo',
  model: 'claude-loopback-demo',
  agents: {
    researcher: [
      { ...tool('Read', { file_path: 'README.md' }, 'Let me look at the project first.'), when: { lastUserIncludes: 'slugify' } },
      tool('Glob', { pattern: '**/*.js' }),
      tool('TaskCreate', {
        subject: 'Implement slugify in src/slug.js',
        description: 'lower-case, words joined by -, strip the rest; make `node test.js` pass',
        activeForm: 'Implementing slugify',
      }),
      tool('TaskCreate', {
        subject: 'Review slugify',
        description: 'read src/slug.js, check the edge cases, report a verdict to team-lead',
        activeForm: 'Reviewing slugify',
      }),
      tool('TaskUpdate', { taskId: '2', addBlockedBy: ['1'], owner: 'reviewer' }),
      tool('TaskUpdate', { taskId: '1', owner: 'implementer' }),
      tool('SendMessage', {
        to: 'implementer',
        message: 'Task #1 is yours: implement slugify in src/slug.js so that `node test.js` passes. Tell reviewer when it is ready.',
        summary: 'task #1: implement slugify',
      }),
      tool('SendMessage', {
        to: 'team-lead',
        message:
          'Research done: the project needs src/slug.js. I created task #1 (implement, implementer) and task #2 (review, reviewer, blocked by #1).',
        summary: 'plan: 2 tasks',
      }),
      { text: 'Research complete: two tasks created and assigned.' },
    ],
    implementer: [
      { ...tool('TaskUpdate', { taskId: '1', status: 'in_progress' }, 'Starting on task #1.'), when: { lastUserIncludes: 'Task #1 is yours' } },
      tool('Write', { file_path: 'src/slug.js', content: SLUG_JS }),
      tool('Bash', { command: 'node test.js', description: 'run the tests' }),
      {
        // What happened to the test run decides what is reported: only a passing run goes to review.
        oneOf: [
          { when: { toolResultIncludes: '2 tests passed' }, ...tool('TaskUpdate', { taskId: '1', status: 'completed' }) },
          {
            when: { toolResultIncludes: 'Permission to use Bash was denied' },
            ...tool('SendMessage', {
              to: 'team-lead',
              message: DENIED_REPORT,
              summary: 'tests not run: denied',
            }),
          },
          {
            when: { toolResultIsError: true },
            ...tool('SendMessage', { to: 'team-lead', message: FAILED_REPORT, summary: 'tests failed' }),
          },
        ],
      },
      {
        when: { toolResultIncludes: 'Updated #1 [completed]' },
        ...tool('SendMessage', {
          to: 'reviewer',
          message: 'slugify is ready in src/slug.js and `node test.js` passes. Please review (task #2).',
          summary: 'ready for review',
        }),
      },
      { text: 'Implemented slugify; tests pass.' },
    ],
    reviewer: [
      { ...tool('TaskUpdate', { taskId: '2', status: 'in_progress' }, 'Reviewing.'), when: { lastUserIncludes: 'slugify is ready' } },
      tool('Read', { file_path: 'src/slug.js' }),
      tool('TaskUpdate', { taskId: '2', status: 'completed' }),
      tool('SendMessage', {
        to: 'team-lead',
        message: 'Review of src/slug.js: PASS — lower-cases, joins words with -, trims separators at both ends.',
        summary: 'review: PASS',
      }),
      { text: 'VERDICT: PASS' },
    ],
  },
  // Messages that arrive before an agent's cue (a task assignment, an idle notification to the lead).
  // No usage is fixed: the loopback model accounts tokens and cache reads honestly.
  fallback: { text: 'Noted.' },
}
