/**
 * A root hook of `npm test`: the type check of the whole project (tsc --noEmit), run while the
 * engine starts and mocha loads the test files; a type error fails the run before any test.
 */
import { spawn } from 'node:child_process';
import { repoRoot } from './support/run';

const typeErrors = new Promise<string | undefined>((done) => {
  const tsc = spawn(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  tsc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  tsc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  tsc.on('error', (error) => done(`tsc could not run: ${error.message}`));
  tsc.on('close', (code) => done(code === 0 ? undefined : output.trim() || `tsc exited ${code}`));
});

export const mochaHooks: Mocha.RootHookObject = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(600_000);
    const errors = await typeErrors;
    if (errors) throw new Error(`the type check failed (tsc -p tsconfig.json --noEmit):\n${errors}`);
  },
};
