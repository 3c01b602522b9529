/**
 * A local HTTP server for `npm run sync` tests, serving a folder the way EBI's table_dumps folder
 * is served: strong ETags and Last-Modified, 304 for a conditional GET of an unchanged file, and
 * byte ranges with If-Range (200 with the whole file when the validator no longer matches, 416
 * for a range past the end). Switches break a response off after some bytes, or serve a file cut
 * short (with headers that agree with the cut, as a server holding a truncated file would).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';

export interface SeenRequest {
  file: string;
  status: number;
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

export interface DumpServer {
  /** The base URL of the folder served. */
  url: string;
  /** Every request answered, in order. */
  requests: SeenRequest[];
  /** Breaks the next answers for a file off (the socket destroyed) after this many bytes of body. */
  cutAfter: Map<string, number>;
  /** Files served cut to half their bytes, with headers that agree: a corrupt file on the server. */
  truncated: Set<string>;
  close(): Promise<void>;
}

function served(root: string, file: string, truncated: boolean): { body: Buffer; etag: string; lastModified: string } {
  const whole = readFileSync(join(root, file));
  const body = truncated ? whole.subarray(0, Math.floor(whole.length / 2)) : whole;
  const etag = `"${createHash('md5').update(body).digest('hex')}"`;
  return { body, etag, lastModified: statSync(join(root, file)).mtime.toUTCString() };
}

/** Serves the files of `root` on an ephemeral port of 127.0.0.1. */
export async function startDumpServer(root: string): Promise<DumpServer> {
  const requests: SeenRequest[] = [];
  const cutAfter = new Map<string, number>();
  const truncated = new Set<string>();

  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const file = basename(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    const seen: SeenRequest = {
      file,
      status: 0,
      range: request.headers.range,
      ifRange: request.headers['if-range'] as string | undefined,
      ifNoneMatch: request.headers['if-none-match'],
      ifModifiedSince: request.headers['if-modified-since'],
    };
    requests.push(seen);
    const end = (status: number, headers: Record<string, string | number> = {}, body?: Buffer): void => {
      seen.status = status;
      response.writeHead(status, headers);
      const cut = cutAfter.get(file);
      if (body && cut !== undefined && cut < body.length && request.method !== 'HEAD') {
        response.write(body.subarray(0, cut), () => response.socket?.destroy());
        return;
      }
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (!existsSync(join(root, file)) || file === '') return end(404, { 'content-type': 'text/plain' });
    const { body, etag, lastModified } = served(root, file, truncated.has(file));
    const validators = { etag, 'last-modified': lastModified, 'accept-ranges': 'bytes' };
    const type = file.endsWith('.gz') ? 'application/x-gzip' : 'text/plain';
    const noneMatch = request.headers['if-none-match'];
    const modifiedSince = request.headers['if-modified-since'];
    if (noneMatch !== undefined ? noneMatch === etag : modifiedSince !== undefined && modifiedSince === lastModified)
      return end(304, validators);
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
    const ifRange = seen.ifRange;
    if (range && (ifRange === undefined || ifRange === etag || ifRange === lastModified)) {
      const first = Number(range[1]);
      if (first >= body.length)
        return end(416, { ...validators, 'content-range': `bytes */${body.length}`, 'content-length': 0 });
      const last = range[2] === '' ? body.length - 1 : Math.min(Number(range[2]), body.length - 1);
      const part = body.subarray(first, last + 1);
      return end(
        206,
        {
          ...validators,
          'content-type': type,
          'content-range': `bytes ${first}-${last}/${body.length}`,
          'content-length': part.length,
        },
        part,
      );
    }
    end(200, { ...validators, 'content-type': type, 'content-length': body.length }, body);
  };

  const server = createServer(answer);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/pub/databases/chembl/UniChem/data/table_dumps`,
    requests,
    cutAfter,
    truncated,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
