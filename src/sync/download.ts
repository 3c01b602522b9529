/**
 * Downloads one file of a published folder over HTTP(S) into `<file>.part`, resumably: the part's
 * validators (ETag, Last-Modified, size) are kept beside it in `<file>.part.json`, and the next
 * run asks for the rest with `Range` and `If-Range`, so a file changed on the server meanwhile is
 * fetched again from its start. A file already in place is asked for with `If-None-Match` /
 * `If-Modified-Since`, and a 304 keeps it.
 */
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What identifies one version of a file on the server. */
export interface Validators {
  etag?: string;
  lastModified?: string;
  /** Bytes of the whole file, as the server gave it (Content-Length or Content-Range). */
  size?: number;
}

/** The server or the network failed: what was downloaded so far is kept for the next run. */
export class NetworkFailed extends Error {
  override name = 'NetworkFailed';
}

export interface Fetched {
  /** `unchanged`: the server answered 304, the file in place is current, and nothing was written. */
  action: 'downloaded' | 'resumed' | 'unchanged';
  /** Bytes received by this run. */
  bytes: number;
  validators: Validators;
  /** The complete download, to check and move into place (not for `unchanged`). */
  part?: string;
}

export interface FetchOptions {
  /** The validators of the file in place, if there is one: it is asked for conditionally. */
  inPlace?: Validators;
  /** A progress line for stderr. */
  say: (line: string) => void;
  /** Whether to say how a long download is going, every few seconds. */
  progress: boolean;
}

const partMeta = (part: string): string => `${part}.json`;

/** `If-Range` needs a strong validator: a strong ETag, else the Last-Modified date. */
function ifRange(validators: Validators): string | undefined {
  if (validators.etag && !validators.etag.startsWith('W/')) return validators.etag;
  return validators.lastModified;
}

async function readPart(part: string, url: string): Promise<{ bytes: number; validators: Validators } | undefined> {
  const [meta, bytes] = await Promise.all([
    readFile(partMeta(part), 'utf8').then(
      (text) => JSON.parse(text) as Validators & { url?: string },
      () => undefined,
    ),
    stat(part).then(
      (s) => s.size,
      () => undefined,
    ),
  ]);
  if (!meta || bytes === undefined || meta.url !== url || !ifRange(meta)) {
    await discardPart(part);
    return undefined;
  }
  return { bytes, validators: { etag: meta.etag, lastModified: meta.lastModified, size: meta.size } };
}

/** Moves a checked part into place under its real name, and forgets its validators. */
export async function movePartInto(part: string, target: string): Promise<void> {
  await rename(part, target);
  await rm(partMeta(part), { force: true });
}

/** Deletes a part and its validators (a corrupt download, or one of another version). */
export async function discardPart(part: string): Promise<void> {
  await Promise.all([rm(part, { force: true }), rm(partMeta(part), { force: true })]);
}

function validatorsOf(response: Response, size: number | undefined): Validators {
  return {
    etag: response.headers.get('etag') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    size,
  };
}

function wholeNumberHeader(value: string | null): number | undefined {
  return value !== null && /^[0-9]+$/.test(value.trim()) ? Number(value) : undefined;
}

/** A Content-Range value: `bytes <first>-<last>/<total>`, or `bytes *\/<total>` with a 416. */
function contentRange(value: string | null): { first?: number; total?: number } {
  const match = /^bytes\s+(?:(\d+)-\d+|\*)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!match) return {};
  return {
    first: match[1] === undefined ? undefined : Number(match[1]),
    total: match[2] === '*' ? undefined : Number(match[2]),
  };
}

async function request(url: string, file: string, headers: Record<string, string>): Promise<Response> {
  try {
    // identity: the size and the ranges are those of the .gz file itself, never of a re-encoding of it.
    return await fetch(url, { headers: { 'accept-encoding': 'identity', ...headers }, redirect: 'follow' });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new NetworkFailed(`${file}: cannot reach ${url} (${cause})`);
  }
}

/** The text of a small file of the folder (a checksum listing), or undefined if the server has none. */
export async function fetchSmallText(baseUrl: string, file: string): Promise<string | undefined> {
  const response = await request(`${baseUrl}/${file}`, file, {});
  const size = wholeNumberHeader(response.headers.get('content-length'));
  if (response.status !== 200 || (size !== undefined && size > 1_000_000)) {
    await response.body?.cancel();
    return undefined;
  }
  return response.text();
}

export function sizeText(bytes: number | undefined): string {
  if (bytes === undefined) return 'an unknown number of bytes';
  if (bytes < 1024 * 1024) return `${bytes} bytes`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Brings `file` of the folder at `baseUrl` into `folder/<file>.part`, or finds that the copy in place
 * is current. Throws `NetworkFailed` (the part kept) when the server refuses or the transfer breaks off.
 */
export async function fetchFile(
  baseUrl: string,
  folder: string,
  file: string,
  options: FetchOptions,
): Promise<Fetched> {
  const url = `${baseUrl}/${file}`;
  const part = join(folder, `${file}.part`);
  const partial = await readPart(part, url);
  const headers: Record<string, string> = {};
  if (partial) {
    headers.range = `bytes=${partial.bytes}-`;
    headers['if-range'] = ifRange(partial.validators)!;
  } else if (options.inPlace) {
    if (options.inPlace.etag) headers['if-none-match'] = options.inPlace.etag;
    if (options.inPlace.lastModified) headers['if-modified-since'] = options.inPlace.lastModified;
  }
  const response = await request(url, file, headers);
  if (response.status === 304 && !partial && options.inPlace) {
    await response.body?.cancel();
    options.say(`${file}: unchanged on the server (304), kept`);
    return { action: 'unchanged', bytes: 0, validators: options.inPlace };
  }
  if (response.status === 416 && partial) {
    await response.body?.cancel();
    const { total } = contentRange(response.headers.get('content-range'));
    if (total === partial.bytes) {
      options.say(`${file}: the download kept from an earlier run is whole (${sizeText(total)})`);
      return { action: 'resumed', bytes: 0, validators: { ...partial.validators, size: total }, part };
    }
    options.say(`${file}: the server cannot continue the kept download (416): starting again`);
    await discardPart(part);
    return fetchFile(baseUrl, folder, file, options);
  }
  if (response.status === 206 && partial) {
    const range = contentRange(response.headers.get('content-range'));
    if (range.first !== partial.bytes) {
      await response.body?.cancel();
      options.say(`${file}: the server answered another range than asked: starting again`);
      await discardPart(part);
      return fetchFile(baseUrl, folder, file, options);
    }
    const validators = { ...partial.validators, size: range.total ?? partial.validators.size };
    options.say(`${file}: resuming at byte ${partial.bytes} of ${sizeText(validators.size)}`);
    const bytes = await receive(response, part, file, partial.bytes, validators, options);
    return { action: 'resumed', bytes, validators, part };
  }
  if (response.status === 200) {
    if (partial) options.say(`${file}: changed on the server since the kept download: starting again`);
    const validators = validatorsOf(response, wholeNumberHeader(response.headers.get('content-length')));
    await writeFile(partMeta(part), `${JSON.stringify({ url, ...validators })}\n`);
    options.say(`${file}: downloading ${sizeText(validators.size)} from ${url}`);
    const bytes = await receive(response, part, file, 0, validators, options);
    return { action: 'downloaded', bytes, validators, part };
  }
  await response.body?.cancel();
  throw new NetworkFailed(`${file}: ${url} answered ${response.status} ${response.statusText}`.trim());
}

/** Streams the response body into `part` (appended after `from` bytes); resolves with the bytes received. */
async function receive(
  response: Response,
  part: string,
  file: string,
  from: number,
  validators: Validators,
  options: FetchOptions,
): Promise<number> {
  let received = 0;
  let lastSaid = Date.now();
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (options.progress && Date.now() - lastSaid >= 5_000) {
        lastSaid = Date.now();
        const share = validators.size ? ` (${Math.floor(((from + received) / validators.size) * 100)} %)` : '';
        options.say(`${file}: ${sizeText(from + received)} of ${sizeText(validators.size)}${share}`);
      }
      done(null, chunk);
    },
  });
  try {
    if (!response.body) throw new Error('the answer has no body');
    await pipeline(
      Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>),
      counting,
      createWriteStream(part, { flags: from > 0 ? 'a' : 'w' }),
    );
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new NetworkFailed(
      `${file}: the download broke off after ${from + received} of ${sizeText(validators.size)} (${cause}); ` +
        `${part} is kept and the next run resumes it`,
    );
  }
  return received;
}
