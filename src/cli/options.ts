/** commander: a repeatable option (`--allow A --allow B`) collected into a list. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}
