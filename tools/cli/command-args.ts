/**
 * A subcommand's arguments, parsed one way for every `filterd` command that takes a config file:
 * node:util parseArgs (strict) with `-c/--config FILE` and `-h/--help` added to its own options.
 * `--help` prints the usage and exits 0; an unknown or malformed option prints its message and the
 * usage and exits 2, as do a positional argument and a missing `--config`.
 */
import { parseArgs } from 'node:util'

type OptionSpec = Record<string, { type: 'string' | 'boolean', short?: string, multiple?: boolean }>
const common = { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } as const
type Parsed<O extends OptionSpec> = ReturnType<typeof parseArgs<{ args: string[], strict: true, allowPositionals: false, options: O & typeof common }>>

/** The parsed options with the config file's path, or the exit code the command returns at once. */
export function commandArgs<O extends OptionSpec> (name: string, usage: string, argv: string[], options: O):
  { values: Parsed<O>['values'], config: string } | number {
  let parsed: Parsed<O>
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { ...options, ...common } })
  } catch (err) {
    process.stderr.write(`filterd ${name}: ${(err as Error).message}\n${usage}`)
    return 2
  }
  const values = parsed.values as Parsed<O>['values'] & { config?: string, help?: boolean }
  if (values.help === true) { process.stdout.write(usage); return 0 }
  if (values.config === undefined) { process.stderr.write(usage); return 2 }
  return { values, config: values.config }
}
