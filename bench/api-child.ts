/**
 * The API in a child process, as the benchmarks run it: the benchmark script forks itself with
 * `--serve`, the child serves on a free port and says where, and stops when told.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readConfig } from '../src/config';
import { startServer } from '../src/server';

/** The child's side: serves the API for the environment's configuration until told to stop. */
export async function serveApi(): Promise<void> {
  const { url, stop } = await startServer(readConfig(), {}, 0);
  process.send!({ url });
  process.on('message', (message) => {
    if (message === 'stop') void stop().then(() => process.exit(0));
  });
}

/** Forks `script` with `--serve` and `env` (request logs off); resolves once the API listens. */
export async function startApiChild(script: string, env: NodeJS.ProcessEnv, execArgv = process.execArgv): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(script, ['--serve'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, execArgv });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the API child exited with code ${code} before listening`)));
  });
  return { child, url };
}

/** Stops the API child (its graceful stop; killed after 15 s) and waits until it is gone. */
export async function stopApiChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(force);
}
