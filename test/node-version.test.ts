/**
 * chemxref needs Node.js 22 or newer: every npm script runs scripts/check-node.cjs first, which refuses
 * an older node with one line that says what it found, what it needs and where the README says how to
 * get Node 24.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { repoRoot, runToEnd } from './support/run';

const check = join(repoRoot, 'scripts', 'check-node.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain CommonJS, so that an old node reads it
const { nodeVersionProblem } = require(check) as {
  nodeVersionProblem(version: string, executable?: string): string | null;
};

const scripts = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** NODE_OPTIONS that make every node started with them report `version` as its own. */
function posingAs(version: string): string {
  const preload = join(mkdtempSync(join(tmpdir(), 'chemxref-node-')), 'pose.cjs');
  writeFileSync(
    preload,
    `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } });\n`,
  );
  return `--require ${preload}`;
}

describe('the Node.js version', () => {
  it('every npm script but postinstall runs scripts/check-node.cjs before anything else', () => {
    // postinstall runs inside `npm ci`, where the Dockerfile's stages have not copied scripts/ yet.
    const unchecked = Object.entries(scripts)
      .filter(([name, command]) => name !== 'postinstall' && !command.startsWith('node scripts/check-node.cjs && '))
      .map(([name]) => name);
    expect(unchecked).to.deep.equal([]);
  });

  it('Node 20 is refused with what was found, what is needed and where the README says how to get Node 24', () => {
    const line = nodeVersionProblem('20.20.2', '/usr/bin/node');
    expect(line).to.include('20.20.2').and.include('/usr/bin/node').and.include('22 or newer');
    expect(line).to.include('README.md').and.include('Requirements');
    expect(line).not.to.include('\n');
    expect(nodeVersionProblem('18.19.1')).to.include('18.19.1');
    expect(nodeVersionProblem('22.0.0')).to.equal(null);
    expect(nodeVersionProblem('24.11.1')).to.equal(null);
  });

  for (const command of [
    ['demo'],
    ['start'],
    ['load', '--', 'history'],
    ['map', '--', '--help'],
    ['export', '--', '--help'],
    ['es:status'],
  ]) {
    it(`\`npm run ${command.join(' ')}\` on a node that says it is 20.20.2 prints that one line and does nothing`, async () => {
      const { code, stdout, stderr } = await runToEnd('npm', ['run', '--silent', ...command], {
        NODE_OPTIONS: posingAs('20.20.2'),
        // Were the check to let it through, nothing answers here and nothing is started.
        ES_URL: 'http://127.0.0.1:9',
        PORT: '0',
      });
      expect(code).to.equal(1);
      expect(stdout).to.equal('');
      expect(stderr.trim().split('\n')).to.have.length(1);
      expect(stderr).to.match(
        /^chemxref needs Node\.js 22 or newer, and this is Node\.js 20\.20\.2 \(.*\): README\.md/,
      );
    });
  }

  it("the check runs on the system's own older node, if the machine has one", function () {
    const nodes = spawnSync('bash', ['-c', 'which -a node'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    const older = nodes.find((node) => {
      const version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
      return version !== '' && Number(version.split('.')[0]) < 22;
    });
    if (!older) this.skip();
    const run = spawnSync(older, [check], { encoding: 'utf8' });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.match(/^chemxref needs Node\.js 22 or newer, and this is Node\.js \d+\.[\d.]+ \(/);
  });
});
