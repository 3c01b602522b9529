import { expect } from 'chai';
import {
  CliExit,
  formatUsage,
  HelpRequested,
  parseCommandLine,
  reportFailure,
  UsageError,
  wholeNumber,
} from '../src/cli';
import { runToEnd, type Finished } from './support/run';

/** Runs `npm run <script> -- <args>` as a user types it; resolves with its exit code and output. */
function npmRun(script: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return runToEnd('npm', ['run', '--silent', script, '--', ...args], env);
}

/** The shape of every usage: the synopsis, then titled sections of one entry a line, `-h, --help` among the options. */
function expectUsage(text: string, synopsis: string): void {
  const lines = text.trimEnd().split('\n');
  expect(lines[0], text).to.equal(`usage: ${synopsis}`);
  const options = lines.indexOf('options:');
  expect(options, text).to.be.above(0);
  expect(
    lines.slice(options + 1).find((line) => line.startsWith('  -h, --help ')),
    text,
  ).to.match(/print this usage and exit$/);
  for (const line of lines) expect(line.length, line).to.be.at.most(120);
}

describe('the command lines share one parser, one UsageError, one usage shape and one way to exit', function () {
  this.timeout(60_000);

  describe('src/cli.ts', () => {
    const cli = {
      name: 'try',
      usage: 'npm run try -- <command> [options]',
      commands: [['go <file>', 'goes']] as [string, string][],
      positionals: true,
      options: {
        limit: { type: 'string', value: 'N', help: 'how many' },
        progress: { type: 'boolean', help: 'a bar' },
        'no-progress': { type: 'boolean', help: 'no bar' },
      },
    } as const;
    const refusal = (argv: string[]): string => {
      try {
        parseCommandLine(cli, argv);
      } catch (error) {
        expect(error).to.be.instanceOf(UsageError);
        return (error as Error).message;
      }
      return 'accepted';
    };

    it('parses typed options and arguments, and tells which of two opposite flags came last', () => {
      const parsed = parseCommandLine(cli, ['go', 'file', '--limit', '5', '--no-progress', '--progress']);
      expect(parsed.values).to.deep.equal({ limit: '5', 'no-progress': true, progress: true });
      expect(parsed.positionals).to.deep.equal(['go', 'file']);
      expect(parsed.lastOf('progress', 'no-progress')).to.equal('progress');
      expect(parseCommandLine(cli, ['--progress', '--no-progress']).lastOf('progress', 'no-progress')).to.equal(
        'no-progress',
      );
      expect(parseCommandLine(cli, ['--limit=-1']).values.limit).to.equal('-1');
    });

    it('names the flag of every refused command line', () => {
      expect(refusal(['--bogus'])).to.equal('unknown option --bogus');
      expect(refusal(['-x'])).to.equal('unknown option -x');
      expect(refusal(['--limit'])).to.equal('--limit needs a value');
      expect(refusal(['--limit', '--progress'])).to.equal(
        '--limit needs a value (to give it --progress, write --limit=--progress)',
      );
      expect(refusal(['--progress=yes'])).to.equal('--progress takes no value');
      expect(() => parseCommandLine({ ...cli, positionals: false }, ['go'])).to.throw(
        UsageError,
        'unexpected argument "go"',
      );
      expect(() => parseCommandLine(cli, ['go', '--help'])).to.throw(HelpRequested);
      expect(() => parseCommandLine(cli, ['-h'])).to.throw(HelpRequested);
    });

    it('validates numbers, naming the flag and the range', () => {
      expect(wholeNumber('12', '--limit')).to.equal(12);
      expect(() => wholeNumber('0', '--limit')).to.throw(UsageError, '--limit needs a positive whole number, got "0"');
      expect(() => wholeNumber('1.5', '--limit', 0, 10)).to.throw(
        UsageError,
        '--limit needs a whole number from 0 to 10, got "1.5"',
      );
    });

    it('prints the usage in one shape: synopsis, commands, options one a line, long text wrapped', () => {
      const usage = formatUsage({ ...cli, notes: 'A closing note.' });
      expect(usage.split('\n')).to.deep.equal([
        'usage: npm run try -- <command> [options]',
        'commands:',
        '  go <file>      goes',
        'options:',
        '  --limit N      how many',
        '  --progress     a bar',
        '  --no-progress  no bar',
        '  -h, --help     print this usage and exit',
        'A closing note.',
      ]);
      const wrapped = formatUsage({ ...cli, commands: [['go', 'word '.repeat(40).trim()]] }).split('\n');
      expect(wrapped.filter((line) => line.startsWith('                 word'))).to.have.length.above(0);
      expectUsage(wrapped.join('\n'), cli.usage);
    });

    it('exits 0 for --help, 2 for a usage error, the code of a CliExit, 1 for anything else', () => {
      const written: string[] = [];
      const stdout = process.stdout.write;
      const stderr = process.stderr.write;
      process.stdout.write = ((text: string) => written.push(`out:${text}`)) as never;
      process.stderr.write = ((text: string) => written.push(`err:${text}`)) as never;
      let codes: number[];
      try {
        codes = [new HelpRequested(), new UsageError('wrong'), new CliExit(3, 'refused'), new Error('broken')].map(
          (error) => reportFailure(cli, error),
        );
      } finally {
        process.stdout.write = stdout;
        process.stderr.write = stderr;
      }
      expect(codes).to.deep.equal([0, 2, 3, 1]);
      expect(written[0]).to.equal(`out:${formatUsage(cli)}\n`);
      expect(written[1]).to.equal(`err:wrong\n${formatUsage(cli)}\n`);
      expect(written[2]).to.equal('err:refused\n');
      expect(written[3]).to.match(/^err:try failed: Error: broken\n {4}at /);
    });
  });

  // Each CLI as a user runs it. The engine of ES_URL is never reached: a port nothing listens on,
  // so that a command line wrongly accepted fails instead of touching the tests' engine.
  const offline = {
    ES_URL: 'http://127.0.0.1:1',
    ES_INDEX_PREFIX: 'chemxref-cli-test',
    KIBANA_URL: 'http://127.0.0.1:1',
  };
  const clis: { script: string; synopsis: string; wrong: string[]; message: string }[] = [
    {
      script: 'load',
      synopsis: 'npm run load -- <command> [options]',
      wrong: ['history', '--bogus'],
      message: 'unknown option --bogus',
    },
    {
      script: 'export',
      synopsis: 'npm run export -- <command> <folder> [options]',
      wrong: ['dump', 'out', '--form', '1'],
      message: 'unknown option --form',
    },
    {
      script: 'map',
      synopsis: 'npm run map -- <file> [options]',
      wrong: ['-', '--type', 'inchikey', '--fromat', 'tsv'],
      message: 'unknown option --fromat',
    },
    {
      script: 'kibana:setup',
      synopsis: 'npm run kibana:setup [-- options]',
      wrong: ['--space', 'x'],
      message: 'unknown option --space',
    },
    { script: 'demo', synopsis: 'npm run demo [-- options]', wrong: ['--froce'], message: 'unknown option --froce' },
    {
      script: 'es:status',
      synopsis: 'npm run es:<command> [-- options]',
      wrong: ['--wipe'],
      message: '--wipe goes with es:stop',
    },
    {
      script: 'es:stop',
      synopsis: 'npm run es:<command> [-- options]',
      wrong: ['--wipe', '--all'],
      message: 'unknown option --all',
    },
  ];
  for (const { script, synopsis, wrong, message } of clis) {
    const title =
      `npm run ${script}: a wrong flag prints the message and the usage on stderr and exits 2; ` +
      '--help prints the usage on stdout and exits 0';
    it(title, async () => {
      // Two processes at once: each spends most of its time starting npm and tsx.
      const [refused, help] = await Promise.all([npmRun(script, wrong, offline), npmRun(script, ['--help'], offline)]);
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stdout).to.equal('');
      const [first, ...usage] = refused.stderr.split('\n');
      expect(first).to.equal(message);
      expectUsage(usage.join('\n'), synopsis);
      expect(help.code, help.stderr).to.equal(0);
      expect(help.stderr).to.equal('');
      expectUsage(help.stdout, synopsis);
      expect(help.stdout).to.equal(usage.join('\n'));
    });
  }
});
