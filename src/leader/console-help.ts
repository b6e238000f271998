/*
 * The leader console's command reference (`/help`): every slash command, the keys that answer the
 * request on screen, and where other text goes.
 */
export const CONSOLE_HELP = `commands:
  /msg <name|*> <text>     send a message (signed by team-lead)
  /spawn <name> [type] [-- prompt]   start a teammate
  /kill <name> [now]       stop a teammate (graceful unless "now")
  /status                  members, states, tasks, tokens
  /team                    one line per teammate: state, window (page), task, last seen
  /focus <name>            show that teammate's pane (its window made current)
  /tasks                   the task list
  /approve [id] [always]   approve the shown request, or the one named by its [id] (or a unique prefix)
  /deny [id] [feedback]    deny it, telling the teammate why
  /requests                list pending requests
  /show [id]               print a request's whole input (the shown one, or [id]); a long one must be read so before y/a
  /compact [focus]         compact the lead's conversation now (summary + recent files + team)
  /help                    this help
  /quit                    leave the console; pane teammates keep running, in-process ones stop
                           with it (swarm team resume brings the team back)
when a request is shown: y = approve once, a = approve always, n [feedback] = deny
(a key answers only the request whose prompt is on screen)
anything else goes to the lead agent`
