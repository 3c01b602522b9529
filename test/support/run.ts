/** Commands run as a user runs them, from the repository's root. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

export const repoRoot = join(__dirname, '..', '..');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` (and `env` over this process's), to its end; resolves with its exit code and output. */
export async function runToEnd(command: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
