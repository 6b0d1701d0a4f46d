/**
 * A subcommand's arguments, parsed one way for every `filterd` command that takes a config file:
 * node:util parseArgs (strict) with `-c/--config FILE` and `-h/--help` added to its own options.
 * `--help` prints the usage and exits 0; an unknown or malformed option prints its message and the
 * usage and exits 2, as does a positional argument to a command that takes none; a missing
 * `--config` (unless the command has a mode without one) or another count of positional arguments
 * than the command takes prints the usage and exits 2.
 */
import { parseArgs } from 'node:util'

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>
const common = { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } as const
type Parsed<O extends OptionSpec> = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; allowPositionals: true; options: O & typeof common }>
>

/** How a command's arguments go beyond its options. */
export interface CommandShape {
  /** Exactly this many positional arguments (`filterd backup … DIR`: 1); default 0. */
  positionals?: number
  /** The command has a mode without a config file (`filterd restore --check DIR`): `config` may be undefined. */
  configOptional?: boolean
}

export interface CommandArgs<O extends OptionSpec, C extends string | undefined> {
  values: Parsed<O>['values']
  config: C
  positionals: string[]
}

/** The parsed options with the config file's path, or the exit code the command returns at once. */
export function commandArgs<O extends OptionSpec>(
  name: string,
  usage: string,
  argv: string[],
  options: O,
  shape?: CommandShape & { configOptional?: false }
): CommandArgs<O, string> | number
export function commandArgs<O extends OptionSpec>(
  name: string,
  usage: string,
  argv: string[],
  options: O,
  shape: CommandShape & { configOptional: true }
): CommandArgs<O, string | undefined> | number
export function commandArgs<O extends OptionSpec>(
  name: string,
  usage: string,
  argv: string[],
  options: O,
  shape: CommandShape = {}
): CommandArgs<O, string | undefined> | number {
  const wanted = shape.positionals ?? 0
  let parsed: Parsed<O>
  try {
    // Without positionals parseArgs itself refuses one, naming it.
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: wanted > 0, options: { ...options, ...common } })
  } catch (err) {
    process.stderr.write(`filterd ${name}: ${(err as Error).message}\n${usage}`)
    return 2
  }
  const values = parsed.values as Parsed<O>['values'] & { config?: string; help?: boolean }
  if (values.help === true) {
    process.stdout.write(usage)
    return 0
  }
  const positionals = parsed.positionals
  if ((values.config === undefined && shape.configOptional !== true) || positionals.length !== wanted) {
    process.stderr.write(usage)
    return 2
  }
  return { values, config: values.config, positionals }
}
