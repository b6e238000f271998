/**
 * The dedicated prompt of the summarising call, and the first user message of the compacted
 * conversation that carries its summary. The summary replaces the history; the transcript keeps it.
 */

/** Appended as the last user message of the summarising request (the conversation before it stays cached). */
export function summaryRequest(focus?: string): string {
  return [
    'Your conversation is about to be compacted: it will be replaced by the summary you write now. Do not call any tools; reply with text only.',
    'Write a detailed summary that lets you continue the work without the history. Use these sections:',
    '1. Task — what you were asked to do, by whom, and the exact wording of requirements that matter.',
    '2. Decisions — what you decided and why, including approaches you rejected.',
    '3. Files — every file you read, created or changed, with what matters about each (names, functions, line ranges).',
    '4. Done — what is finished and verified.',
    '5. Left — what remains, in order, and the very next step you were taking.',
    '6. Team — who you talked to, what they said or asked, what you promised; the team tasks you own or depend on.',
    '7. Open requests — permission requests you are waiting on, and anything else that blocks you.',
    ...(focus ? [`Pay special attention to: ${focus}`] : []),
    'Wrap the summary in <summary>…</summary>.',
  ].join('\n')
}

/** The summary text: what is inside <summary>, else the whole reply. */
export function extractSummary(reply: string): string {
  const m = /<summary>([\s\S]*?)(?:<\/summary>|$)/.exec(reply)
  return (m ? m[1]! : reply).trim()
}

/** The opening of the compacted conversation. */
export function continuationText(summary: string, restored: string[]): string {
  return [
    'This session continues an earlier conversation that was compacted to stay within the context window. Summary of it:',
    '',
    summary,
    ...restored.flatMap((part) => ['', part]),
    '',
    'Continue from where you left off, without repeating finished work.',
  ].join('\n')
}
