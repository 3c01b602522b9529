import { expect } from 'chai';
import { Gate } from '../src/engine/gate';
import { EngineUnavailable } from '../src/engine/errors';

/** A task that runs until `release()`; `started` tells whether it began. */
function held(): { task: () => Promise<string>; release: () => void; started: () => boolean } {
  let [began, release] = [false, (): void => undefined];
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => ((began = true), await done, 'answered'),
    release: () => release(),
    started: () => began,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Similarity searches run a few at a time (SIMILARITY_CONCURRENCY)', () => {
  it('runs at most the limit at once, and the others in the order they came', async () => {
    const gate = new Gate('similarity searches', 2);
    const tasks = [held(), held(), held(), held()];
    const answers = tasks.map((t) => gate.run(t.task));
    await turn();
    expect(tasks.map((t) => t.started())).to.deep.equal([true, true, false, false]);
    tasks[1].release();
    await turn();
    expect(tasks.map((t) => t.started())).to.deep.equal([true, true, true, false]);
    for (const t of tasks) t.release();
    expect(await Promise.all(answers)).to.deep.equal(['answered', 'answered', 'answered', 'answered']);
  });

  it('frees its place when a search fails', async () => {
    const gate = new Gate('similarity searches', 1);
    await gate.run(() => Promise.reject(new Error('refused'))).catch(() => undefined);
    expect(await gate.run(async () => 'next')).to.equal('next');
  });

  it('answers 503 with Retry-After when too many wait, and serves the rest', async () => {
    const gate = new Gate('similarity searches', 1, 1);
    const [running, waiting] = [held(), held()];
    const answers = [gate.run(running.task), gate.run(waiting.task)];
    const refused = await gate.run(async () => 'never').catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(EngineUnavailable);
    expect((refused as Error).message).to.match(/too many similarity searches at once \(1 running, 1 waiting\)/);
    expect((refused as { retryAfter: number }).retryAfter).to.equal(1);
    running.release();
    waiting.release();
    expect(await Promise.all(answers)).to.deep.equal(['answered', 'answered']);
  });
});
