/**
 * `npm run kibana:setup`: installs the curators' saved objects of kibana/chemxref.ndjson (data
 * views, saved searches, visualizations, the "Sources overview" dashboard) into a Kibana. Before
 * import it fits them to this installation: the index names of ES_INDEX_PREFIX, each source's name
 * in place of its id (a static lookup read from the live sources index), and links to this
 * chemxref (CHEMXREF_URL) and to each source's own pages (from its baseIdUrl).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SourceDocument } from '../engine/documents';

export const savedObjectsFile = join(__dirname, '..', '..', 'kibana', 'chemxref.ndjson');

/** The prefix the shipped objects are written for. */
const shippedPrefix = 'chemxref';
/** The chemxref address the shipped links point to. */
const shippedChemxrefUrl = 'http://127.0.0.1:8080';

export interface SavedObject {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  references: { id: string; name: string; type: string }[];
  [other: string]: unknown;
}

/** The shipped saved objects, one a line. */
export function readSavedObjects(file = savedObjectsFile): SavedObject[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SavedObject);
}

/** The id Kibana gives the ad hoc data view of an ES|QL query on `pattern`. */
export function esqlDataViewId(pattern: string): string {
  return createHash('sha256').update(`esql-${pattern}`).digest('hex');
}

/** Fields that hold a source id, in the data views that show them: shown as the source's name. */
const sourceIdFields = ['sourceId', 'sourceIds'];

/**
 * A Painless string literal of `text` (single-quoted). Source names and URLs come from the sources
 * table, which a curator writes.
 */
function painlessString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Painless that percent-encodes the characters of a compound id that would break a URL's path or query. */
const encodedCompoundId =
  "doc['compoundId'].value.replace('%', '%25').replace('/', " +
  "'%2F').replace('?', '%3F').replace('#', '%23').replace(' ', " +
  "'%20').replace('&', '%26').replace('+', '%2B')";

/**
 * The runtime field `sourcePage` of the assignments data view: the compound's page at its source
 * (baseIdUrl followed by the compound id), for every source that links its ids.
 */
export function sourcePageScript(sources: SourceDocument[]): string {
  const linked = sources.filter((source) => source.baseIdUrlAvailable && source.baseIdUrl);
  const guard = "if (doc['sourceId'].size() == 0 || doc['compoundId'].size() == 0) { return; }";
  if (linked.length === 0) return guard;
  const cases = linked.map(
    (source) =>
      `if (id == ${source.sourceID}) { ` + `emit(${painlessString(source.baseIdUrl!)} + ${encodedCompoundId}); }`,
  );
  return `${guard} long id = doc['sourceId'].value; ${cases.join(' else ')}`;
}

export interface Installation {
  /** ES_INDEX_PREFIX of the chemxref whose indices the objects read. */
  prefix: string;
  /** Where curators' browsers reach chemxref's API (links from InChIKeys, UCIs and compound ids). */
  chemxrefUrl: string;
  /** The live sources table. */
  sources: SourceDocument[];
}

interface FieldFormat {
  id?: string;
  params?: Record<string, unknown>;
}
interface RuntimeField {
  script?: { source?: unknown };
}

/** A saved object's attribute that holds JSON text, parsed (an empty object when it is absent). */
function parsed<Value>(attributes: Record<string, unknown>, key: string): Record<string, Value | undefined> {
  const value = attributes[key];
  return typeof value === 'string' && value !== '' ? JSON.parse(value) : {};
}

/** Replaces every shipped index name (`chemxref-assignments`, ...) in `text` by the installation's. */
function renameIndices(text: string, prefix: string): string {
  if (prefix === shippedPrefix) return text;
  return text.replace(new RegExp(`\\b${shippedPrefix}-(?=[a-z])`, 'g'), `${prefix}-`);
}

/**
 * The shipped objects fitted to one installation: index names, source names, links. Objects and
 * attributes it does not know pass unchanged.
 */
export function fitSavedObjects(objects: SavedObject[], installation: Installation): SavedObject[] {
  const lookup = {
    id: 'static_lookup',
    params: {
      lookupEntries: [...installation.sources]
        .sort((a, b) => a.sourceID - b.sourceID)
        .map((source) => ({
          key: String(source.sourceID),
          value: `${source.nameLabel ?? source.name} (${source.sourceID})`,
        })),
      unknownKeyValue: null,
    },
  };
  const chemxrefUrl = installation.chemxrefUrl.replace(/\/+$/, '');
  return objects.map((object) => {
    const attributes = { ...object.attributes };
    if (object.type === 'index-pattern') {
      attributes.title = renameIndices(String(attributes.title), installation.prefix);
      const formats = parsed<FieldFormat>(attributes, 'fieldFormatMap');
      for (const field of sourceIdFields) if (formats[field]?.id === 'static_lookup') formats[field] = lookup;
      for (const format of Object.values(formats)) {
        const template = format?.params?.urlTemplate;
        if (format?.id === 'url' && format.params && typeof template === 'string') {
          format.params.urlTemplate = template.replace(shippedChemxrefUrl, chemxrefUrl);
        }
      }
      attributes.fieldFormatMap = JSON.stringify(formats);
      const runtime = parsed<RuntimeField>(attributes, 'runtimeFieldMap');
      for (const field of Object.values(runtime)) {
        const source = field?.script?.source;
        if (field?.script && typeof source === 'string')
          field.script.source = source.split(shippedChemxrefUrl).join(chemxrefUrl);
      }
      if (runtime.sourcePage) runtime.sourcePage.script = { source: sourcePageScript(installation.sources) };
      attributes.runtimeFieldMap = JSON.stringify(runtime);
    }
    const meta = attributes.kibanaSavedObjectMeta as { searchSourceJSON?: string } | undefined;
    if (meta?.searchSourceJSON) {
      const searchSource = JSON.parse(renameIndices(meta.searchSourceJSON, installation.prefix));
      // An ES|QL search names its ad hoc data view by the hash of its index pattern.
      if (searchSource.index?.type === 'esql') searchSource.index.id = esqlDataViewId(searchSource.index.title);
      attributes.kibanaSavedObjectMeta = { ...meta, searchSourceJSON: JSON.stringify(searchSource) };
    }
    return { ...object, attributes };
  });
}

/** The saved objects as Kibana's import takes them: NDJSON, one object a line. */
export function toNdjson(objects: SavedObject[]): string {
  return `${objects.map((object) => JSON.stringify(object)).join('\n')}\n`;
}

/** A multipart/form-data body holding `ndjson` as the file Kibana's import reads (field `file`). */
export function importBody(ndjson: string, boundary: string): string {
  return [
    `--${boundary}`,
    'Content-Disposition: form-data; name="file"; filename="chemxref.ndjson"',
    'Content-Type: application/ndjson',
    '',
    ndjson,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

export interface KibanaTarget {
  /** Kibana's address, e.g. http://127.0.0.1:5601 (KIBANA_URL). */
  url: string;
  /** A Kibana space other than the default one. */
  space?: string;
  /** Basic authentication, when Kibana has security on. */
  username?: string;
  password?: string;
  /** How long to wait for Kibana to be ready. */
  waitMs: number;
}

interface ImportAnswer {
  success: boolean;
  successCount: number;
  successResults?: { type: string; id: string; meta?: { title?: string } }[];
  errors?: {
    type: string;
    id: string;
    title?: string;
    meta?: { title?: string };
    error: { type: string; message?: string };
  }[];
}

function base(target: KibanaTarget): string {
  const url = target.url.replace(/\/+$/, '');
  return target.space ? `${url}/s/${encodeURIComponent(target.space)}` : url;
}

function headers(target: KibanaTarget): Record<string, string> {
  const sent: Record<string, string> = { 'kbn-xsrf': 'chemxref' };
  if (target.username)
    sent.authorization = `Basic ${Buffer.from(`${target.username}:${target.password ?? ''}`).toString('base64')}`;
  return sent;
}

/**
 * Waits until Kibana can import (GET /api/status answers 200 with its saved objects, or overall
 * when it tells no more, `available`), polling
 * every `everyMs`; throws with the last thing it heard when `target.waitMs` runs out.
 */
export async function waitForKibana(
  target: KibanaTarget,
  onWait: (message: string) => void = () => undefined,
  everyMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + target.waitMs;
  let last: string;
  let told = false;
  for (;;) {
    try {
      const response = await fetch(`${base(target)}/api/status`, {
        headers: headers(target),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json().catch(() => undefined)) as
        { status?: { overall?: { level?: string }; core?: { savedObjects?: { level?: string } } } } | undefined;
      // Saved objects available is what an import needs; the overall level may stay degraded for a plugin's sake.
      const level = body?.status?.core?.savedObjects?.level ?? body?.status?.overall?.level;
      if (response.ok && level === 'available') return;
      last = `HTTP ${response.status}${level ? `, status ${level}` : ''}`;
    } catch (error) {
      last = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    }
    if (Date.now() + everyMs > deadline)
      throw new Error(
        `Kibana at ${target.url} is not ready after ` + `${Math.round(target.waitMs / 1000)} s (${last})`,
      );
    if (!told) onWait(`waiting for Kibana at ${target.url} (${last})`);
    told = true;
    await new Promise((done) => setTimeout(done, everyMs));
  }
}

/**
 * Imports `objects` into Kibana, overwriting the objects of the same ids. Returns what Kibana says
 * it installed; throws naming each object it refused.
 */
export async function importSavedObjects(
  target: KibanaTarget,
  objects: SavedObject[],
): Promise<{ type: string; id: string; title: string }[]> {
  const boundary = `chemxref-${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const response = await fetch(`${base(target)}/api/saved_objects/_import?overwrite=true`, {
    method: 'POST',
    headers: { ...headers(target), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: importBody(toNdjson(objects), boundary),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  let answer: ImportAnswer | undefined;
  try {
    answer = JSON.parse(text) as ImportAnswer;
  } catch {
    answer = undefined;
  }
  if (!response.ok || !answer)
    throw new Error(`Kibana refused the import: HTTP ${response.status} ${text.slice(0, 500)}`);
  if (!answer.success || (answer.errors?.length ?? 0) > 0) {
    const refused = (answer.errors ?? []).map(
      (error) =>
        `${error.type} "${error.meta?.title ?? error.title ?? error.id}": ${error.error.message ?? error.error.type}`,
    );
    throw new Error(
      `Kibana imported ${answer.successCount} of ${objects.length} saved ` +
        `objects; refused: ${refused.join('; ') || 'no reason given'}`,
    );
  }
  return (answer.successResults ?? []).map((result) => ({
    type: result.type,
    id: result.id,
    title: result.meta?.title ?? result.id,
  }));
}
