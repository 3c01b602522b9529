/**
 * `npm run test:fuzz` (issue 23): schemathesis over the whole OpenAPI document against the real
 * service, for a fixed time. It passes only when no response is a 5xx and every response is one
 * the document describes: schemathesis' checks not_a_server_error, status_code_conformance,
 * content_type_conformance, response_headers_conformance and response_schema_conformance.
 *
 * Like `npm test` it uses the engine of ES_URL when ES_URL is given, else an engine of its own on
 * TEST_ES_PORT (a free port by default), stopped at the end unless KEEP_ENGINE is set; it loads
 * the fixture dump (test/fixtures/dump, real molecules) under an index prefix of its own,
 * `chemxref-fuzz-xxxxxx`, and deletes those indices at the end. The API runs in this process on an
 * ephemeral port, as `npm start` runs it (no response validation of its
 * own: judging responses is the fuzzer's job), with a 20 s engine deadline (ENGINE_TIMEOUT_MS) instead
 * of 3 s, so that a machine's passing load is not taken for a fault of the request.
 *
 * Every operation is fuzzed under every server it answers on (`/api/v1` and `/beta/api/v1`,
 * `/legacy` and `/`): schemathesis would only use the first server of a list, so it is given the
 * served document with each server written into the paths (`flattenServers`). Values from the
 * loaded data (InChIKeys, compound ids, source ids, UCIs) are offered to it as dictionaries, so
 * its requests reach answers and not only validation errors. After the run, every operation must
 * have been reached (an answer no unrouted request gets), so a wrong base URL cannot pass as 404s.
 *
 * Environment: FUZZ_SECONDS (schemathesis' time budget, default 150), FUZZ_WORKERS (concurrent
 * requests, default 1), FUZZ_SEED (repeat a run's generation), FUZZ_DATA (a UniChem dump folder to
 * load instead of the fixture), FUZZ_PYTHON (a Python 3.11+ to build the venv with, default python3),
 * FUZZ_VENV (where the venv lives, default ~/.cache/chemxref-fuzz/venv-<hash of requirements.txt>).
 * `--install-only` installs the pinned schemathesis (test/fuzz/requirements.txt) and exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { readConfig } from '../../src/config';
import { startServer } from '../../src/server';
import {
  chooseEngine,
  deleteIndicesByPrefix,
  finishRunEngine,
  singleNodeSuite,
  startRunEngine,
} from '../support/engine';
import { fixtureDump, load } from '../support/fixture';

const requirementsFile = join(__dirname, 'requirements.txt');
const checks = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
];
const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function say(message: string): void {
  process.stderr.write(`[fuzz] ${message}\n`);
}

interface FuzzSettings {
  seconds: number;
  workers: number;
  seed?: string;
  data: string;
  python: string;
  venv: string;
}

/** The harness's settings from the environment; a bad value fails at once, naming its variable. */
function fuzzSettings(env = process.env): FuzzSettings {
  const whole = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name] || String(fallback);
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max)
      throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return Number(raw);
  };
  const seed = env.FUZZ_SEED || undefined;
  if (seed !== undefined && !/^[0-9]+$/.test(seed))
    throw new Error(`FUZZ_SEED must be a whole number (the Seed: line of a run), got "${seed}"`);
  const data = resolve(env.FUZZ_DATA || fixtureDump);
  if (!existsSync(data))
    throw new Error(
      `FUZZ_DATA must be a UniChem dump folder (source, structure and reference tables), "${data}" does not exist`,
    );
  const pin = createHash('sha256').update(readFileSync(requirementsFile)).digest('hex').slice(0, 12);
  return {
    seconds: whole('FUZZ_SECONDS', 150, 10, 3600),
    // One worker by default: with several threads, hypothesis's ast.parse trips CPython 3.11's
    // "AST constructor recursion depth mismatch" SystemError (python/cpython#106905), a failed run that is no one's
    // bug.
    workers: whole('FUZZ_WORKERS', 1, 1, 16),
    seed,
    data,
    python: env.FUZZ_PYTHON || 'python3',
    venv: resolve(
      env.FUZZ_VENV || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'chemxref-fuzz', `venv-${pin}`),
    ),
  };
}

function runQuietly(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new Error(`cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

/**
 * The schemathesis of test/fuzz/requirements.txt, installed once into a venv of its own (outside
 * the clone). The venv is only used once `installed` is written: an interrupted install is redone.
 */
function installSchemathesis(settings: FuzzSettings): string {
  const executable = join(settings.venv, 'bin', 'schemathesis');
  const marker = join(settings.venv, 'installed');
  if (existsSync(marker) && existsSync(executable)) return executable;
  const version = spawnSync(
    settings.python,
    ['-c', 'import sys; print("%d.%d" % sys.version_info[:2]); sys.exit(0 if sys.version_info >= (3, 11) else 1)'],
    { encoding: 'utf8' },
  );
  if (version.error)
    throw new Error(
      `cannot run ${settings.python} (FUZZ_PYTHON): ${version.error.message}; schemathesis needs Python 3.11+`,
    );
  if (version.status !== 0)
    throw new Error(`${settings.python} (FUZZ_PYTHON) is Python ${version.stdout.trim()}; schemathesis needs 3.11+`);
  say(`installing schemathesis (${requirementsFile}) into ${settings.venv}`);
  rmSync(settings.venv, { recursive: true, force: true });
  mkdirSync(settings.venv, { recursive: true });
  runQuietly(settings.python, ['-m', 'venv', settings.venv]);
  runQuietly(join(settings.venv, 'bin', 'python'), [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--no-input',
    '--disable-pip-version-check',
    '-r',
    requirementsFile,
  ]);
  writeFileSync(marker, readFileSync(requirementsFile));
  return executable;
}

// ---------------------------------------------------------------------------------------------
// The document, the way schemathesis is given it

type Json = Record<string, any>;

/**
 * The document with each path written once per server it answers on (`/beta/api/v1/compounds`,
 * `/legacy/rest/inchikey/{key}`, ...) and one server, `/`. Operation ids of the second and later
 * servers get `@<server>`, so they stay unique.
 */
function flattenServers(document: Json): Json {
  const defaults: string[] = (document.servers ?? [{ url: '/' }]).map((server: Json) => server.url);
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    const servers: string[] = item.servers ? item.servers.map((server: Json) => server.url) : defaults;
    servers.forEach((server, index) => {
      const { servers: _servers, ...copy } = structuredClone(item);
      if (index > 0)
        for (const method of httpMethods) if (copy[method]?.operationId) copy[method].operationId += `@${server}`;
      const full = `${server.replace(/\/+$/, '')}${path}`;
      if (paths[full]) throw new Error(`two servers give the same path ${full}`);
      paths[full] = copy;
    });
  }
  return { ...document, servers: [{ url: '/' }], paths };
}

interface Operation {
  label: string;
  legacy: boolean;
  pattern: RegExp;
}

/** Each operation of a flattened document, with the regular expression its request paths match. */
function operationsOf(flat: Json): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(flat.paths)) {
    const source = `^${path
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}$`;
    for (const method of httpMethods) {
      if (!item[method]) continue;
      found.push({
        label: `${method.toUpperCase()} ${path}`,
        legacy: /^(\/legacy)?\/rest\//.test(path),
        pattern: new RegExp(source),
      });
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Dictionaries: real values of the loaded dump

/** Rows of a dump table (TSV with a header, gzipped or not). */
function readTable(folder: string, name: string): Record<string, string>[] {
  const file = [join(folder, `${name}.tsv.gz`), join(folder, `${name}.tsv`)].find(existsSync);
  if (!file) throw new Error(`${folder} has no ${name}.tsv(.gz)`);
  const raw = readFileSync(file);
  const [header, ...rows] = (file.endsWith('.gz') ? gunzipSync(raw) : raw)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const columns = header.split('\t');
  return rows.map((row) => Object.fromEntries(row.split('\t').map((value, i) => [columns[i], value])));
}

/** At most `count` items spread evenly over `items`. */
function spread<T>(items: T[], count: number): T[] {
  if (items.length <= count) return items;
  return Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]);
}

/**
 * The schemathesis configuration: dictionaries of real InChIKeys and their first blocks, InChIs,
 * UCIs, source ids, compound ids (current, obsolete, and ids with a `/`) and load ids, offered for the
 * parameters and body fields of those names half of the time.
 */
/** The warnings schemathesis shows by default, less the two that random compounds always raise. */
const quietWarnings = [
  'missing_auth',
  'base_url_mismatch',
  'missing_deserializer',
  'unused_openapi_auth',
  'unsupported_regex',
  'method_not_allowed',
  'constants_extraction',
  'unmatched_filter',
  'unresolvable_reference',
  'rate_limited',
  'dictionary_mismatch',
  'timeout_units',
];

function schemathesisConfig(folder: string, loadIds: string[]): string {
  const sources = readTable(folder, 'source').map((row) => row.SRC_ID);
  const structures = spread(readTable(folder, 'structure'), 40);
  const references = readTable(folder, 'reference');
  const obsolete = spread(
    references.filter((row) => row.ASSIGMENT === '0'),
    10,
  );
  const ids = [
    ...spread(
      references.filter((row) => row.ASSIGMENT !== '0'),
      40,
    ),
    ...obsolete,
    ...spread(
      references.filter((row) => row.SRC_COMPOUND_ID.includes('/')),
      5,
    ),
  ].map((row) => row.SRC_COMPOUND_ID);
  const keys = structures.map((row) => row.STANDARDINCHIKEY);
  const ucis = structures.map((row) => row.UCI);
  // Integer parameters take numbers: schemathesis offers a dictionary's entries of the wrong type only in negative
  // cases.
  const dictionaries: Record<string, (string | number)[]> = {
    keys: [...keys, ...keys.map((key) => key.slice(0, 14))],
    ids: [...new Set(ids)],
    sources,
    sourceNumbers: sources.map(Number),
    uciNumbers: ucis.map(Number),
    compounds: [...keys, ...spread(structures, 10).map((row) => row.STANDARDINCHI), ...ucis, ...ids],
    obsoleteIds: [...new Set(obsolete.map((row) => row.SRC_COMPOUND_ID))],
    obsoleteSources: [...new Set(obsolete.map((row) => row.SRC_ID))],
    loadIds,
  };
  const parameters: Record<string, string> = {
    'path.key': 'keys',
    'path.id': 'ids',
    'path.src': 'sources',
    'path.to_src': 'sources',
    'path.A': 'sourceNumbers',
    'path.uci': 'uciNumbers',
    'path.sourceID': 'sourceNumbers',
    'body.compound': 'compounds',
    'body.sourceID': 'sourceNumbers',
    'query.since': 'loadIds',
  };
  // The *_obsolete methods answer only for an id with an obsolete assignment, asked in its own source.
  const obsoleteParameters: Record<string, string> = { 'path.id': 'obsoleteIds', 'path.src': 'obsoleteSources' };
  // A dictionary must have entries (a dump may have no obsolete assignment).
  const bindings = (bound: Record<string, string>): string[] =>
    Object.entries(bound)
      .filter(([, name]) => dictionaries[name].length > 0)
      .map(([parameter, name]) => `${JSON.stringify(parameter)} = { dictionary = "${name}", probability = 0.5 }`);
  const lines = ['# Written by test/fuzz/run.ts for one run.'];
  for (const [name, values] of Object.entries(dictionaries)) {
    if (values.length > 0)
      lines.push(`[dictionaries.${name}]`, `values = [${values.map((value) => JSON.stringify(value)).join(', ')}]`);
  }
  lines.push('[parameters]', ...bindings(parameters));
  lines.push(
    '[[operations]]',
    'include-path-regex = "_obsolete/"',
    '[operations.parameters]',
    ...bindings(obsoleteParameters),
  );
  // Compounds and connectivity: random InChIs that pass the document's `InChI=1S/` pattern are 400s and
  // random keys or ids 404s, so "most generated data rejected" (validation_mismatch, missing_test_data)
  // says nothing of these two; shown, it would make the closing line '1 warning in …s', the shape of a
  // pytest run that ran no test, instead of 'No issues found'.
  lines.push(
    '[[operations]]',
    'include-path-regex = "/api/v1/(compounds|connectivity)$"',
    'include-method = "POST"',
    `warnings = [${quietWarnings.map((name) => JSON.stringify(name)).join(', ')}]`,
  );
  // A job's paths: a random job id is a 404 (ids are 128 random bits; none is guessed), as a random key is.
  lines.push(
    '[[operations]]',
    'include-path-regex = "/api/v1/jobs/"',
    'include-method = "GET"',
    `warnings = [${quietWarnings.map((name) => JSON.stringify(name)).join(', ')}]`,
  );
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Reading the run's events

interface Finding {
  operation: string;
  check: string;
  title: string;
  status: number | undefined;
  contentType: string;
  message: string;
  count: number;
  example: string;
}

interface RunReport {
  findings: Finding[];
  serverErrors: { operation: string; status: number; example: string }[];
  unreached: string[];
  operations: number;
  failedOperations: Set<string>;
  requests: number;
  errors: string[];
}

function decoded(content: unknown): string {
  if (typeof content === 'string') return content;
  const base64 = (content as { $base64?: string } | null)?.$base64;
  return base64 === undefined ? '' : Buffer.from(base64, 'base64').toString('utf8');
}

function headerValue(headers: Json | undefined, name: string): string {
  const entry = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
  return String(Array.isArray(entry) ? entry[0] : (entry ?? ''));
}

function shorten(text: string, length = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length)}…` : line;
}

/** What the run's NDJSON events say: every failed check, every 5xx, and the operations never reached. */
async function readEvents(file: string, operations: Operation[]): Promise<RunReport> {
  const findings = new Map<string, Finding>();
  const serverErrors: RunReport['serverErrors'] = [];
  const reached = new Set<string>();
  const failedOperations = new Set<string>();
  const errors: string[] = [];
  let requests = 0;
  const operationOf = (method: string, url: string, fallback: string): Operation | undefined => {
    const path = new URL(url).pathname;
    return (
      operations.find(
        (operation) => operation.label.startsWith(`${method.toUpperCase()} `) && operation.pattern.test(path),
      ) ?? operations.find((operation) => operation.label === fallback)
    );
  };
  for await (const line of createInterface({ input: createReadStream(file) })) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as Json;
    if (event.NonFatalError) errors.push(shorten(JSON.stringify(event.NonFatalError.info ?? event.NonFatalError), 500));
    const recorder = event.ScenarioFinished?.recorder;
    if (!recorder) continue;
    for (const [caseId, interaction] of Object.entries<Json>(recorder.interactions ?? {})) {
      const { request, response } = interaction;
      if (!request || !response) continue;
      requests += 1;
      const operation = operationOf(request.method, request.uri, recorder.label);
      const status: number = response.status_code;
      const label = operation?.label ?? recorder.label;
      const body = decoded(response.content);
      const sent = headerValue(request.headers, 'content-type');
      const example = `${request.method} ${request.uri}${sent ? ` (${sent})` : ''}${request.body ? ` ${shorten(decoded(request.body), 200)}` : ''} → ${status} ${headerValue(response.headers, 'content-type')} ${shorten(body)}`;
      // Only a routed request can get a 2xx, or a 404 under a legacy server (an unrouted legacy path is a 400).
      if (
        operation &&
        request.method.toUpperCase() === operation.label.split(' ')[0] &&
        ((status >= 200 && status < 300) || (status === 404 && operation.legacy))
      )
        reached.add(operation.label);
      if (status >= 500 && serverErrors.length < 50) serverErrors.push({ operation: label, status, example });
      for (const check of (recorder.checks?.[caseId] ?? []) as Json[]) {
        if (check.status === 'success' || check.status === 'skip') continue;
        const failure = check.failure_info?.failure ?? {};
        const contentType = headerValue(response.headers, 'content-type').split(';')[0].trim();
        const key = [label, check.name, failure.title, status, contentType].join('|');
        const known = findings.get(key);
        if (known) known.count += 1;
        else
          findings.set(key, {
            operation: label,
            check: check.name,
            title: failure.title ?? check.status,
            status,
            contentType,
            message: String(failure.message ?? ''),
            count: 1,
            example,
          });
        failedOperations.add(label);
      }
    }
  }
  const unreached = operations.map((operation) => operation.label).filter((label) => !reached.has(label));
  for (const label of unreached) failedOperations.add(label);
  for (const { operation } of serverErrors) failedOperations.add(operation);
  return {
    findings: [...findings.values()],
    serverErrors,
    unreached,
    operations: operations.length,
    failedOperations,
    requests,
    errors,
  };
}

/**
 * The findings grouped by cause (check, failure, status, Content-Type), each with the operations it hit and one
 * request.
 */
function printReport(report: RunReport): void {
  const out = (line = ''): void => {
    process.stdout.write(`${line}\n`);
  };
  out();
  out(`== fuzz: ${report.requests} requests to ${report.operations} operations (each path under each of its servers)`);
  const causes = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const key = `${finding.check}: ${finding.title} (${finding.status ?? 'no response'}${finding.contentType ? `, ${finding.contentType}` : ''})`;
    causes.set(key, [...(causes.get(key) ?? []), finding]);
  }
  for (const [cause, findings] of [...causes.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const total = findings.reduce((sum, finding) => sum + finding.count, 0);
    out();
    out(`FAILED ${cause}: ${total} responses in ${findings.length} operations`);
    if (findings[0].message) out(`  ${findings[0].message.split('\n').join('\n  ')}`);
    out(`  e.g. ${findings[0].example}`);
    for (const finding of findings.sort((a, b) => a.operation.localeCompare(b.operation)))
      out(`  - ${finding.operation} (${finding.count})`);
  }
  if (report.serverErrors.length > 0) {
    out();
    out(`FAILED responses ≥ 500: ${report.serverErrors.length}${report.serverErrors.length === 50 ? ' or more' : ''}`);
    for (const error of report.serverErrors.slice(0, 10)) out(`  - ${error.operation}: ${error.example}`);
  }
  if (report.unreached.length > 0) {
    out();
    out(
      `FAILED never reached (no 2xx, nor a legacy 404, to any request: a ` +
        `wrong base URL or path?): ${report.unreached.length} operations`,
    );
    for (const label of report.unreached) out(`  - ${label}`);
  }
  if (report.errors.length > 0) {
    out();
    out(`FAILED errors of the run itself: ${report.errors.length}`);
    for (const error of report.errors.slice(0, 10)) out(`  - ${error}`);
  }
  out();
  out(`fuzz: ${report.operations - report.failedOperations.size} passed, ${report.failedOperations.size} failed`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const settings = fuzzSettings();
  const schemathesis = installSchemathesis(settings);
  if (process.argv.includes('--install-only')) return 0;

  process.env.ES_INDEX_PREFIX = `chemxref-fuzz-${randomBytes(3).toString('hex')}`;
  process.env.LOG_LEVEL ??= 'silent';
  // An engine held up by the machine's load (a GC pause, another job on a shared engine) would answer
  // the 3 s deadline's 503: that is the reliability tests' subject, and not a fault of the request the fuzzer sent.
  process.env.ENGINE_TIMEOUT_MS ??= '20s';
  // Every job the fuzzer submits is queued: under the default JOB_MAX_ACTIVE (4) the later ones were
  // mostly 429s, which left the submission's logic untested (test/jobs.test.ts covers the 429 itself).
  process.env.JOB_MAX_ACTIVE ??= '100000';
  const engine = chooseEngine(process.env, singleNodeSuite);
  process.env.ES_URL = engine.url;
  const config = readConfig();
  const runDir = join(tmpdir(), config.ES_INDEX_PREFIX);
  const cleanups: (() => Promise<unknown>)[] = [];
  let child: ChildProcess | undefined;
  let interrupted = false;
  // Once, whether the run ends or is interrupted: the last step set up is undone first.
  let cleaning: Promise<void> | undefined;
  const cleanUp = (): Promise<void> => {
    cleaning ??= (async () => {
      for (let step = cleanups.pop(); step; step = cleanups.pop())
        await step().catch((error: Error) => say(`clean-up: ${error.message}`));
    })();
    return cleaning;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      say(`${signal}: stopping`);
      child?.kill('SIGTERM');
      void cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    const began = Date.now();
    await startRunEngine(engine, config.ES_HEAP);
    cleanups.push(() => finishRunEngine(engine));
    cleanups.push(async () => {
      const deleted = await deleteIndicesByPrefix(config.ES_URL, config.ES_INDEX_PREFIX);
      say(`deleted ${deleted.length} indices ${config.ES_INDEX_PREFIX}-*`);
    });
    const summary = await load(config.ES_INDEX_PREFIX, ['dump', settings.data]);
    if (summary.status !== 'done')
      throw new Error(`loading ${settings.data} did not complete: ${JSON.stringify(summary)}`);
    const server = await startServer(config, {}, 0);
    cleanups.push(() => server.stop(1000));
    say(
      `${settings.data} loaded as ${config.ES_INDEX_PREFIX} ` +
        `(${summary.rowsLoaded} rows), API on ${server.url}, after ` +
        `${((Date.now() - began) / 1000).toFixed(1)} s`,
    );

    const response = await fetch(`${server.url}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
    const flat = flattenServers((await response.json()) as Json);
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, 'openapi.json'), `${JSON.stringify(flat, null, 2)}\n`);
    // The load that replaced every source: what `since` of /sources/{sourceID}/changes takes.
    const loadIds = ((summary.steps ?? []) as { command?: string; loadId?: string }[])
      .filter((step) => step.command === 'references')
      .map((step) => String(step.loadId));
    writeFileSync(join(runDir, 'schemathesis.toml'), schemathesisConfig(settings.data, loadIds));
    const events = join(runDir, 'events.ndjson');
    const args = [
      '--config-file',
      join(runDir, 'schemathesis.toml'),
      'run',
      join(runDir, 'openapi.json'),
      '--url',
      server.url,
      '--checks',
      checks.join(','),
      '--continue-on-failure',
      '--max-time',
      String(settings.seconds),
      '--workers',
      String(settings.workers),
      '--request-timeout',
      '60',
      '--no-color',
      '--report',
      'ndjson',
      '--report-ndjson-path',
      events,
      ...(settings.seed ? ['--seed', settings.seed] : []),
    ];
    say(`schemathesis ${args.join(' ')}`);
    const fuzzBegan = Date.now();
    if (interrupted) return 130;
    // hooks.py: a serializer for the NDJSON bodies of /batch and /jobs, which schemathesis has none for.
    const env = {
      ...process.env,
      SCHEMATHESIS_HOOKS: 'hooks',
      PYTHONPATH: [__dirname, process.env.PYTHONPATH].filter(Boolean).join(':'),
    };
    child = spawn(schemathesis, args, { cwd: runDir, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const exit = await new Promise<number>((done, fail) => {
      child!.once('error', fail);
      child!.once('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
    });
    say(`schemathesis exited ${exit} after ${((Date.now() - fuzzBegan) / 1000).toFixed(0)} s`);
    if (interrupted) return 130;
    if (!existsSync(events)) throw new Error(`schemathesis wrote no events (${events})`);
    const report = await readEvents(events, operationsOf(flat));
    printReport(report);
    const failed = exit !== 0 || report.failedOperations.size > 0 || report.errors.length > 0;
    if (failed)
      say(
        `the run's document, configuration and events stay in ${runDir} ` +
          `(replay a case there: ${schemathesis} replay <id>; repeat the run: ` +
          `FUZZ_SEED=<Seed above>)`,
      );
    else rmSync(runDir, { recursive: true, force: true });
    return failed ? 1 : 0;
  } finally {
    await cleanUp();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`[fuzz] ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
