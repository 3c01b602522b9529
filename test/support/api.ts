/** The API in-process on an ephemeral port, against a real engine, with responses validated too. */
import type { Config } from '../../src/config';
import { startServer } from '../../src/server';

export interface RunningApi {
  url: string;
  stop: () => Promise<void>;
  post: (path: string, body: unknown) => Promise<{ status: number; body: any; headers: Headers }>;
  get: (
    path: string,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: any; text: string; headers: Headers }>;
}

/** Starts the service for `config` on port 0 (response validation on). */
export async function startApi(config: Config): Promise<RunningApi> {
  const { url, stop } = await startServer(config, { validateResponses: true }, 0);
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  return {
    url,
    stop,
    post: async (path, body) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, body: parse(await response.text()), headers: response.headers };
    },
    get: async (path, headers = {}) => {
      const response = await fetch(`${url}${path}`, { headers });
      const text = await response.text();
      return { status: response.status, body: parse(text), text, headers: response.headers };
    },
  };
}
