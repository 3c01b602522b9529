/**
 * What every command line of chemxref shares (`npm run load`, `export`, `map`, `kibana:setup`,
 * `demo`, `es:*`): options parsed by `node:util` `parseArgs` (strict, typed), one `UsageError`, one
 * shape of usage text, and one way to exit:
 *   0  done (and `--help`, which prints the usage on stdout)
 *   1  failed
 *   2  wrong usage: the message, then the usage, on stderr
 * and whatever other code a command documents (the load's 3 for a refused release), thrown as a
 * `CliExit`.
 */
import { parseArgs } from 'node:util';
import { ConfigError, readConfig, type Config } from './config';
import { EngineUnavailable, translateEngineError } from './engine/errors';

/** A command line that cannot be run as given; the CLI prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `--help` or `-h`: the CLI prints its usage on stdout and exits 0. */
export class HelpRequested extends UsageError {
  override name = 'HelpRequested';
  constructor() {
    super('');
  }
}

/** Ends a CLI with `code`, after writing `message` (if any) on stderr. */
export class CliExit extends Error {
  override name = 'CliExit';
  constructor(
    readonly code: number,
    message = '',
  ) {
    super(message);
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** How the usage names the value of a string option: N, F, <loadId>. */
  value?: string;
  /** The option's line in the usage (wrapped to fit). */
  help: string;
}

export interface CliSpec<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** The CLI's name in what an unforeseen failure prints: `load failed: <stack>`. */
  name: string;
  /** How the CLI is run, and what follows: `npm run load -- <command> [options]`. */
  usage: string;
  /** The commands (or arguments) and what each does, one a line. */
  commands?: [string, string][];
  /** What the list of commands is called in the usage: `commands` unless said. */
  commandsTitle?: string;
  /** The options; `-h, --help` is added to every CLI. */
  options: O;
  /** Whether the CLI takes arguments besides its options. */
  positionals?: boolean;
  /** A closing paragraph of the usage. */
  notes?: string;
}

const help: OptionSpec = { type: 'boolean', short: 'h', help: 'print this usage and exit' };
const width = 118;

function wrap(text: string, room: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

function optionName(name: string, option: OptionSpec): string {
  const long = `--${name}${option.type === 'string' ? ` ${option.value ?? '<value>'}` : ''}`;
  return option.short ? `-${option.short}, ${long}` : long;
}

/** The usage text of a CLI: its synopsis, then its commands and its options, one a line. */
export function formatUsage(cli: CliSpec): string {
  const sections: [string, [string, string][]][] = [];
  if (cli.commands?.length) sections.push([cli.commandsTitle ?? 'commands', cli.commands]);
  const options = { ...cli.options, help };
  sections.push(['options', Object.entries(options).map(([name, option]) => [optionName(name, option), option.help])]);
  const left = Math.min(36, Math.max(...sections.flatMap(([, rows]) => rows.map(([term]) => term.length))) + 2);
  const lines = [`usage: ${cli.usage}`];
  for (const [title, rows] of sections) {
    lines.push(`${title}:`);
    for (const [term, text] of rows) {
      const head = `  ${term}`;
      const described = wrap(text, width - left - 2);
      const apart = head.length + 1 > left + 2 || described.length === 0;
      lines.push(apart ? head : `${head.padEnd(left + 2)}${described[0]}`);
      lines.push(...described.slice(apart ? 0 : 1).map((line) => `${' '.repeat(left + 2)}${line}`));
    }
  }
  if (cli.notes) lines.push(...wrap(cli.notes, width));
  return lines.join('\n');
}

type Values<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]['type'] extends 'string' ? string : boolean;
};

export interface ParsedCommandLine<O extends Record<string, OptionSpec>> {
  values: Values<O>;
  positionals: string[];
  /** Of the options named, the one given last (`--progress --no-progress` means no progress), if any. */
  lastOf(...names: (keyof O & string)[]): (keyof O & string) | undefined;
}

/**
 * Parses `argv` (without node and the script) against the CLI's options, strictly: an option it does
 * not know, a missing value, a value given to a flag or an argument it takes none of is a
 * `UsageError` naming it; `--help` or `-h` throws `HelpRequested`.
 */
export function parseCommandLine<O extends Record<string, OptionSpec>>(
  cli: CliSpec<O>,
  argv: string[],
): ParsedCommandLine<O> {
  const options = Object.fromEntries(
    Object.entries({ ...cli.options, help }).map(([name, { type, short }]) => [
      name,
      short ? { type, short } : { type },
    ]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: cli.positionals ?? false, tokens: true });
  } catch (error) {
    throw new UsageError(explain(argv, options, cli.positionals ?? false) ?? (error as Error).message);
  }
  if (parsed.values.help) throw new HelpRequested();
  const given = parsed.tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : []));
  return {
    values: parsed.values as Values<O>,
    positionals: parsed.positionals,
    lastOf: (...names) =>
      names.reduce<(keyof O & string) | undefined>((last, name) => {
        const at = given.lastIndexOf(name);
        return at >= 0 && (last === undefined || at > given.lastIndexOf(last)) ? name : last;
      }, undefined),
  };
}

/** What is wrong with a command line strict parsing refused, in the words of the usage. */
function explain(
  argv: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
  positionals: boolean,
): string | undefined {
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional' && !positionals) return `unexpected argument "${token.value}"`;
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (!option) return `unknown option ${token.rawName}`;
    if (option.type === 'string' && token.value === undefined) return `${token.rawName} needs a value`;
    // Strict parsing does not take a value that looks like an option from the next argument.
    if (option.type === 'string' && !token.inlineValue && token.value?.startsWith('-')) {
      return `${token.rawName} needs a value (to give it ${token.value}, write ${token.rawName}=${token.value})`;
    }
    if (option.type === 'boolean' && token.value !== undefined) return `${token.rawName} takes no value`;
  }
  return undefined;
}

/** A whole number of at least `min` (and at most `max`) given to `flag`, or a usage error naming it. */
export function wholeNumber(value: string, flag: string, min = 1, max?: number): number {
  const number = /^[0-9]+$/.test(value.trim()) ? Number(value) : NaN;
  if (Number.isSafeInteger(number) && number >= min && (max === undefined || number <= max)) return number;
  let range = min === 1 ? 'a positive whole number' : `a whole number from ${min}`;
  if (max !== undefined) range = `a whole number from ${min} to ${max}`;
  throw new UsageError(`${flag} needs ${range}, got "${value}"`);
}

/** One of `choices` given to `flag`, or a usage error naming it and them. */
export function oneOf<T extends string>(value: string, flag: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got "${value}"`);
}

/** The exit code for what a CLI's main threw, after writing what the user needs to see. */
export function reportFailure(cli: CliSpec, error: unknown): number {
  if (error instanceof HelpRequested) {
    process.stdout.write(`${formatUsage(cli)}\n`);
    return 0;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message ? `${error.message}\n` : ''}${formatUsage(cli)}\n`);
    return 2;
  }
  if (error instanceof CliExit) {
    if (error.message) process.stderr.write(`${error.message}\n`);
    return error.code;
  }
  process.stderr.write(`${cli.name} failed: ${(error as Error)?.stack ?? String(error)}\n`);
  return 1;
}

/**
 * Runs a CLI's `main` on the command line: what it resolves with is the exit code (0 if nothing),
 * left to Node so that output drains and a server it started keeps running; anything it throws
 * ends the process at once with `reportFailure`'s code.
 */
export function runCli(cli: CliSpec, main: (argv: string[]) => Promise<number | void>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (error: unknown) => process.exit(reportFailure(cli, error)),
  );
}

/**
 * The config, for a command line: a setting that cannot be read is as much the caller's to fix as a
 * wrong argument (exit 2).
 */
export function readCommandConfig(): Config {
  try {
    return readConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new CliExit(2, error.message);
    throw error;
  }
}

/** Rows as a plain-text table: each column padded to its widest cell, two spaces between columns. */
export function textTable(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * A command's failure as exit 1, `<what> failed: ...`: the message alone for an error the user can
 * act on (a configuration error, the engine unavailable, or one of `expected`), the stack for any other.
 */
export function commandFailed(
  what: string,
  error: unknown,
  expected: (abstract new (...args: never[]) => Error)[] = [],
): CliExit {
  const translated = translateEngineError(error) as Error;
  const known = [ConfigError, EngineUnavailable, ...expected].some((kind) => translated instanceof kind);
  return new CliExit(1, `${what} failed: ${known ? translated.message : (translated.stack ?? translated.message)}`);
}
