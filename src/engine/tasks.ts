/** Long engine operations (reindex, force merge) run as tasks, followed until they end. */
import type { Engine } from './client';

export interface TaskStatus { total?: number; created?: number; failures?: unknown[] }

/**
 * Waits for the engine task `taskId` to complete, calling `onStatus` with its status every
 * `everyMs`, and returns its response. A task that ends with an error or with failures throws, and
 * a wait that is itself interrupted (the caller throws out of `onStatus`) cancels the task.
 */
export async function awaitTask(engine: Engine, taskId: string, onStatus: (status: TaskStatus) => Promise<void> | void = () => undefined, everyMs = 2_000): Promise<Record<string, unknown>> {
  try {
    for (;;) {
      const task = await engine.client.tasks.get({ task_id: taskId }) as {
        completed?: boolean; task?: { status?: TaskStatus }; response?: Record<string, unknown> & { failures?: unknown[] }; error?: { reason?: string; type?: string };
      };
      if (task.completed) {
        if (task.error) throw new Error(`engine task ${taskId} failed: ${task.error.reason ?? task.error.type}`);
        const failures = task.response?.failures ?? [];
        if (failures.length > 0) throw new Error(`engine task ${taskId} ended with ${failures.length} failure(s), the first: ${JSON.stringify(failures[0]).slice(0, 500)}`);
        return task.response ?? {};
      }
      await onStatus(task.task?.status ?? {});
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  } catch (error) {
    await engine.client.tasks.cancel({ task_id: taskId }).catch(() => undefined);
    throw error;
  }
}
