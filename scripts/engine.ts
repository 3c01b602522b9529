/**
 * A real Elasticsearch for development, tests and CI, without Docker: one node, or a cluster of
 * several on consecutive ports of this machine (ES_NODES).
 *
 * The distribution is Elastic's integ-test zip from Maven Central (the real bin/elasticsearch and
 * jars, no bundled JDK), fetched once with maven-dependency-plugin and unpacked under `.engine/`.
 * The engine version lives in `.env` (ELASTIC_VERSION), which docker-compose reads too.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@elastic/elasticsearch';
import { engineNodes } from '../src/config';

export const projectRoot = resolve(__dirname, '..');

/** Whether every folder above `dir` can be entered by other users (the engine's user must reach it). */
function reachableByOthers(dir: string): boolean {
  for (let parent = resolve(dir, '..'); ; parent = resolve(parent, '..')) {
    try {
      if ((statSync(parent).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (parent === '/') return true;
  }
}

/**
 * Where the engine lives: `.engine/` in the project (ignored by git), or CHEMXREF_ENGINE_DIR. When
 * root runs a project checked out under a private folder (such as /root), the engine's own user
 * could not reach `.engine/`, so it goes to /var/lib/chemxref-engine/<hash of the project path>.
 */
function chooseEngineRoot(): string {
  if (process.env.CHEMXREF_ENGINE_DIR) return resolve(process.env.CHEMXREF_ENGINE_DIR);
  const local = join(projectRoot, '.engine');
  if (process.getuid?.() !== 0 || reachableByOthers(local)) return local;
  return join('/var/lib/chemxref-engine', createHash('sha256').update(projectRoot).digest('hex').slice(0, 12));
}

export const engineRoot = chooseEngineRoot();
/**
 * The nodes' `path.repo`: where the filesystem repository of `npm run backup` lives, one folder
 * shared by the single node and every node of a local cluster (a restore into another shape reads it).
 */
export const backupsDir = join(engineRoot, 'backups');
const engineUser = 'chemxref-es';
const singleClusterName = 'chemxref-local';
const localHosts = ['127.0.0.1', 'localhost'];

/** The pinned engine version, read from `.env` (ELASTIC_VERSION=...). */
export function elasticVersion(): string {
  const env = readFileSync(join(projectRoot, '.env'), 'utf8');
  const match = /^ELASTIC_VERSION=([0-9.]+)\s*$/m.exec(env);
  if (!match) throw new Error('.env has no ELASTIC_VERSION=x.y.z line');
  return match[1];
}

export function distributionHome(version = elasticVersion()): string {
  return join(engineRoot, `elasticsearch-${version}`);
}

function log(message: string): void {
  process.stderr.write(`[es] ${message}\n`);
}

/** Downloads (with Maven) and unpacks the distribution once; later calls reuse it. */
export function fetchDistribution(version = elasticVersion()): string {
  const home = distributionHome(version);
  if (existsSync(join(home, 'bin', 'elasticsearch'))) return home;
  const downloadDir = join(engineRoot, 'download');
  mkdirSync(downloadDir, { recursive: true });
  const zip = join(downloadDir, `elasticsearch-${version}.zip`);
  if (!existsSync(zip)) {
    log(`fetching org.elasticsearch.distribution.integ-test-zip:elasticsearch:${version}:zip from Maven Central`);
    const result = spawnSync(
      'mvn',
      [
        '-B',
        '-q',
        '-Dstyle.color=never',
        // Maven 3.8 would otherwise fall back to an old dependency plugin without `copy -Dartifact`.
        'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
        `-Dartifact=org.elasticsearch.distribution.integ-test-zip:elasticsearch:${version}:zip`,
        `-DoutputDirectory=${downloadDir}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', cwd: engineRoot, maxBuffer: 64 * 1024 * 1024 },
    );
    // What Maven says, without the ANSI codes it writes even in batch mode, for the demo's and CI's logs.
    const said = `${result.stdout ?? ''}${result.stderr ?? ''}`.replace(
      new RegExp(String.raw`\u001b\[[0-9;]*[A-Za-z]`, 'g'),
      '',
    );
    if (said.trim() !== '') process.stderr.write(said.endsWith('\n') ? said : `${said}\n`);
    if (result.error)
      throw new Error(`cannot run Maven (mvn): ${result.error.message}. Install Maven 3.8+ and a JDK 17+.`);
    if (result.status !== 0 || !existsSync(zip))
      throw new Error(`Maven could not fetch Elasticsearch ${version} (exit ${result.status})`);
  }
  log(`unpacking ${zip}`);
  const tmp = `${home}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  execFileSync('unzip', ['-q', zip, '-d', tmp]);
  const inner = join(tmp, `elasticsearch-${version}`);
  // Rename only once complete, so an interrupted unpack is never mistaken for a distribution.
  execFileSync('mv', [inner, home]);
  rmSync(tmp, { recursive: true, force: true });
  return home;
}

/** The major version of the JDK at `home`, from its `release` file; undefined when it is not a JDK. */
function jdkMajor(home: string): number | undefined {
  if (!existsSync(join(home, 'bin', 'java'))) return undefined;
  try {
    const version = /^JAVA_VERSION="(?:1\.)?(\d+)/m.exec(readFileSync(join(home, 'release'), 'utf8'));
    return version ? Number(version[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The JDK 17+ with the highest major version among the folders of `folder`; undefined when there is none. */
export function newestJdk(folder: string): string | undefined {
  if (!existsSync(folder)) return undefined;
  const jdks = readdirSync(folder)
    .map((name) => ({ home: join(folder, name), major: jdkMajor(join(folder, name)) ?? 0 }))
    .filter((jdk) => jdk.major >= 17)
    .sort((a, b) => b.major - a.major || a.home.localeCompare(b.home));
  return jdks[0]?.home;
}

/**
 * The JDK to run the engine: ES_JAVA_HOME, else the newest JDK 17+ under /usr/lib/jvm, else
 * JAVA_HOME. The newest, because the integ-test distribution has no JDK of its own, while the
 * Docker image of the same version (docker-compose.yml) runs on the current JDK Elastic bundles
 * (25 and later for 8.19): tests and benchmarks then run the engine on the JDK users run it on.
 */
export function javaHome(): string {
  if (process.env.ES_JAVA_HOME) return process.env.ES_JAVA_HOME;
  const newest = newestJdk('/usr/lib/jvm');
  if (newest) return newest;
  if (process.env.JAVA_HOME) return process.env.JAVA_HOME;
  throw new Error('no JDK found: set ES_JAVA_HOME to a JDK 17+');
}

export interface Endpoint {
  host: string;
  port: number;
  url: string;
}

export function endpointOf(esUrl: string): Endpoint {
  const parsed = new URL(esUrl);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)),
    url: esUrl.replace(/\/+$/, ''),
  };
}

/**
 * `clusterName` is missing when the node cannot tell its cluster's health (no master elected yet, or an auth error).
 */
export type Probe =
  | { state: 'elasticsearch'; status: string; clusterName?: string }
  | { state: 'other'; detail: string }
  | { state: 'free' };

async function localClusterName(endpoint: Endpoint): Promise<string | undefined> {
  try {
    const response = await fetch(`${endpoint.url}/_nodes/_local?filter_path=cluster_name`, {
      signal: AbortSignal.timeout(3000),
    });
    return ((await response.json()) as { cluster_name?: string }).cluster_name;
  } catch {
    return undefined;
  }
}

/** Whether something accepts TCP connections on `host`:`port`. */
function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise<boolean>((done) => {
    const socket = connect(port, host);
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
  });
}

/** What answers on the port: an Elasticsearch node (by its product header), something else, or nothing. */
export async function probe(endpoint: Endpoint): Promise<Probe> {
  try {
    // A node without a master would hold the request for 30 s (the default master_timeout).
    const response = await fetch(`${endpoint.url}/_cluster/health?master_timeout=2s`, {
      signal: AbortSignal.timeout(3000),
    });
    const body = await response.text();
    if (response.headers.get('x-elastic-product') === 'Elasticsearch') {
      let health: { status?: string; cluster_name?: string } = {};
      try {
        health = JSON.parse(body);
      } catch {
        /* an auth error body is not health */
      }
      // A node without a master cannot tell the health, but still its own cluster's name.
      const clusterName = health.cluster_name ?? (await localClusterName(endpoint));
      return { state: 'elasticsearch', status: health.status ?? 'unknown', ...(clusterName ? { clusterName } : {}) };
    }
    return { state: 'other', detail: `HTTP ${response.status} without the X-elastic-product header` };
  } catch {
    return (await acceptsConnections(endpoint.host, endpoint.port))
      ? { state: 'other', detail: 'the port accepts connections but does not speak HTTP like Elasticsearch' }
      : { state: 'free' };
  }
}

// ---------------------------------------------------------------------------------------------
// Where each node lives

/** One node the project runs: its ports, folders and pid file. */
interface NodeLayout {
  name: string;
  url: string;
  httpPort: number;
  transportPort: number;
  dataDir: string;
  logsDir: string;
  runDir: string;
  pidFile: string;
  logFile: string;
}

/** The nodes `startEngine(esUrl, heap, nodes)` runs for one ES_URL and ES_NODES. */
interface ClusterLayout {
  clusterName: string;
  host: string;
  /** One node: discovery.type=single-node, in the engine root's own data, logs and run folders. */
  single: boolean;
  nodes: NodeLayout[];
  /** Written once the cluster has formed: from then on a node starts without cluster.initial_master_nodes. */
  formedFile?: string;
}

function nodeLayout(
  name: string,
  url: string,
  httpPort: number,
  transportPort: number,
  dir: string,
  logPrefix: string,
): NodeLayout {
  const runDir = join(dir, 'run');
  return {
    name,
    url,
    httpPort,
    transportPort,
    dataDir: join(dir, 'data'),
    logsDir: join(dir, 'logs'),
    runDir,
    pidFile: join(runDir, 'elasticsearch.pid'),
    logFile: join(dir, 'logs', `${logPrefix}.log`),
  };
}

/**
 * One node keeps the layout it always had (`.engine/data`, `logs`, `run`; cluster chemxref-local),
 * so existing setups keep their data. Several nodes are one cluster per set of ports,
 * `chemxref-local-<first>-<last>`, under `.engine/cluster-<first>-<last>/node-<port>/`: a cluster on
 * 9210-9212 and the single node on 9200 never share a folder or a cluster name, so never join.
 * Transport ports are the HTTP ports + 100 (9200 → 9300). `home`, when given, holds the single
 * node's `data`, `logs` and `run` instead of the engine root (an engine of a test suite's own,
 * never mixed with the demo's data), or a cluster's `node-<port>` folders instead of
 * `cluster-<first>-<last>`.
 */
function clusterLayout(esUrl: string, nodes = 1, home?: string): ClusterLayout {
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 50)
    throw new Error(`the number of nodes to run must be 1 to 50, got ${nodes}`);
  const first = endpointOf(engineNodes(esUrl)[0]);
  const lastPort = first.port + nodes - 1;
  if (lastPort + 100 > 65535)
    throw new Error(
      `ports ${first.port}-${lastPort} leave no room for their transport ports (+100): set ES_URL to a lower port`,
    );
  if (nodes === 1) {
    return {
      clusterName: singleClusterName,
      host: first.host,
      single: true,
      nodes: [
        nodeLayout(singleClusterName, first.url, first.port, first.port + 100, home ?? engineRoot, singleClusterName),
      ],
    };
  }
  const clusterName = `${singleClusterName}-${first.port}-${lastPort}`;
  const root = home ?? join(engineRoot, `cluster-${first.port}-${lastPort}`);
  const origin = `${new URL(first.url).protocol}//${new URL(first.url).host.replace(/:\d+$/, '')}`;
  return {
    clusterName,
    host: first.host,
    single: false,
    formedFile: join(root, 'formed'),
    nodes: Array.from({ length: nodes }, (_, i) => first.port + i).map((port) =>
      nodeLayout(`chemxref-${port}`, `${origin}:${port}`, port, port + 100, join(root, `node-${port}`), clusterName),
    ),
  };
}

/** Whether process `pid` still runs (a killed node's process may linger as a zombie). */
function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return !existsSync('/proc/self'); // no procfs (macOS): the signal has to do
  }
}

/**
 * The pid of the node's process from its pid file, if that process still runs and is this node's
 * Elasticsearch: a pid file outlives a node killed with kill -9, and its pid may since name
 * another process. The node's environment has HOME set to its own run folder.
 */
function livePid(node: NodeLayout): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(node.pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !processLives(pid)) return undefined;
  if (!existsSync('/proc/self')) return pid;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('org.elasticsearch')) return undefined;
  } catch {
    return undefined;
  }
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`HOME=${node.runDir}`) ? pid : undefined;
  } catch {
    return pid; // another user's process keeps its environment private: the command line has to do
  }
}

/** A node of the project for one ES_URL and ES_NODES. `alive`: its process runs (whether it answers or not). */
export interface ClusterNode {
  name: string;
  url: string;
  httpPort: number;
  transportPort: number;
  /** Set only while the node's process runs. */
  pid?: number;
  alive: boolean;
  dataDir: string;
  logFile: string;
}

/**
 * The nodes `startEngine(esUrl, heap, nodes)` runs, in port order, with the pid of each one whose
 * process runs: what a test kills a node by. For the single node, `transportPort` is the first port
 * of its range (9300-9399 for 9200).
 */
export function clusterNodes(esUrl: string, nodes = 1, home?: string): ClusterNode[] {
  return clusterLayout(esUrl, nodes, home).nodes.map((node) => {
    const pid = livePid(node);
    return {
      name: node.name,
      url: node.url,
      httpPort: node.httpPort,
      transportPort: node.transportPort,
      ...(pid === undefined ? {} : { pid }),
      alive: pid !== undefined,
      dataDir: node.dataDir,
      logFile: node.logFile,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Starting nodes

/** When run as root the nodes run as a dedicated system user (Elasticsearch refuses root). */
function ensureEngineUser(dirs: string[]): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync('id', ['-u', engineUser]).status !== 0) {
    log(`creating system user ${engineUser}`);
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', engineUser]);
  }
  // The folders of the nodes being started and the distribution only: not the data of nodes that run.
  const parents = [...new Set(dirs.map((dir) => resolve(dir, '..')))];
  // The engine user must be able to reach .engine (and a node's own folder) through every parent folder.
  for (const target of new Set([engineRoot, ...parents]))
    for (let dir = resolve(target, '..'); dir !== '/'; dir = resolve(dir, '..')) {
      if ((statSync(dir).mode & 0o001) === 0)
        throw new Error(
          `${dir} is not searchable by other users, so ${engineUser} cannot reach ${target}: chmod o+x ${dir}`,
        );
    }
  execFileSync('chown', [`${engineUser}:`, engineRoot, ...parents]);
  execFileSync('chown', ['-R', `${engineUser}:`, ...dirs]);
  return engineUser;
}

/** The environment of a node's process; HOME is its run folder, which is how livePid knows it. */
function nodeEnvironment(node: NodeLayout, heap: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ES_JAVA_HOME: javaHome(),
    ES_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`,
    ES_TMPDIR: join(node.runDir, 'tmp'),
    HOME: node.runDir,
  };
}

/** `command args` run as `user` (when root) with exactly `env`. */
function asEngineUser(
  user: string | undefined,
  env: Record<string, string>,
  command: string,
  args: string[],
): { file: string; argv: string[]; env: Record<string, string> } {
  return user
    ? {
        file: 'runuser',
        argv: ['-u', user, '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), command, ...args],
        env: { PATH: env.PATH },
      }
    : { file: command, argv: args, env };
}

/**
 * Nodes started together would race to create the distribution's keystore on their first start
 * (the single node creates it on its own).
 */
function ensureKeystore(home: string, user: string | undefined): void {
  if (existsSync(join(home, 'config', 'elasticsearch.keystore'))) return;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ES_JAVA_HOME: javaHome() };
  const run = asEngineUser(user, env, join(home, 'bin', 'elasticsearch-keystore'), ['create']);
  const created = spawnSync(run.file, run.argv, { env: run.env, encoding: 'utf8' });
  if (created.status !== 0)
    throw new Error(`could not create the keystore of ${home}: ${created.stderr || created.stdout}`);
}

function nodeSettings(layout: ClusterLayout, node: NodeLayout, formed: boolean): string[] {
  const cluster = layout.single
    ? // The single node takes the first free transport port of its range, as it always has.
      [`transport.port=${node.transportPort}-${node.transportPort + 99}`, 'discovery.type=single-node']
    : [
        `transport.port=${node.transportPort}`,
        `discovery.seed_hosts=${layout.nodes
          .filter((other) => other !== node)
          .map((other) => `127.0.0.1:${other.transportPort}`)
          .join(',')}`,
        // Only until the cluster has formed once: later it would be ignored, with a warning in every log.
        ...(formed ? [] : [`cluster.initial_master_nodes=${layout.nodes.map((each) => each.name).join(',')}`]),
      ];
  return [
    `cluster.name=${layout.clusterName}`,
    `node.name=${node.name}`,
    'network.host=127.0.0.1',
    `http.port=${node.httpPort}`,
    ...cluster,
    `path.data=${node.dataDir}`,
    `path.logs=${node.logsDir}`,
    // The filesystem repository of `npm run backup` (docs/operations.md#backup), the same for every node.
    `path.repo=${backupsDir}`,
    // No disk setting: the watermarks keep the engine's defaults (docs/operations.md#a-full-disk), so
    // that a full disk makes the indices read-only, which a load reports, instead of breaking the engine.

    // Tests delete their own indices by name; these local nodes only.
    'action.destructive_requires_name=false',
    // Only x-pack keys whose module ships in the integ-test distribution (x-pack-core, x-pack-security).
    'xpack.security.enabled=false',
  ];
}

/**
 * Runs the launcher in a session of its own (setsid), so that the daemon it forks is in no terminal's
 * process group: Ctrl-C in the terminal that ran `npm run demo` or `npm test` stops them, not the
 * engine. Resolves with what it printed once it exits; rejects with that on a non-zero exit.
 */
function runDetached(file: string, argv: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(file, argv, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', (error) => fail(Object.assign(error, { output })));
    child.on('close', (code) =>
      code === 0 ? done(output) : fail(Object.assign(new Error(`exit ${code}`), { code, output })),
    );
  });
}

/** Starts one node as a daemon; resolves once its process has started (bin/elasticsearch -d returns). */
async function launchNode(
  layout: ClusterLayout,
  node: NodeLayout,
  home: string,
  heap: string,
  user: string | undefined,
  formed: boolean,
): Promise<void> {
  const args = ['-d', '-p', node.pidFile, ...nodeSettings(layout, node, formed).flatMap((setting) => ['-E', setting])];
  const run = asEngineUser(user, nodeEnvironment(node, heap), join(home, 'bin', 'elasticsearch'), args);
  const consoleLog = join(node.runDir, 'console.log');
  try {
    writeFileSync(consoleLog, await runDetached(run.file, run.argv, { env: run.env, cwd: node.runDir }));
  } catch (error) {
    const failed = error as { code?: number | string; output?: string; message: string };
    writeFileSync(consoleLog, failed.output || failed.message);
    throw new Error(`exit ${failed.code ?? '?'}`, { cause: error });
  }
}

function logTail(node: NodeLayout, lines = 60): string {
  const candidates = [node.logFile, join(node.runDir, 'console.log')];
  return (
    candidates
      .filter(existsSync)
      .map((file) => {
        const all = readFileSync(file, 'utf8').split('\n');
        return `--- ${file} (last ${lines} lines) ---\n${all.slice(-lines).join('\n')}`;
      })
      .join('\n') || `(node ${node.name} wrote no log)`
  );
}

const tailsOf = (nodes: NodeLayout[]): string => nodes.map((node) => logTail(node)).join('\n');

interface Health {
  cluster_name: string;
  status: 'green' | 'yellow' | 'red';
  timed_out?: boolean;
  number_of_nodes: number;
  number_of_data_nodes: number;
  unassigned_shards: number;
}

/** GET `path` on the first node that answers it with JSON; undefined when none does. */
async function askAnyNode<T>(
  layout: ClusterLayout,
  path: string,
  accept: (body: T) => boolean,
): Promise<T | undefined> {
  for (const node of layout.nodes) {
    try {
      const response = await fetch(`${node.url}${path}`, { signal: AbortSignal.timeout(10_000) });
      const body = (await response.json()) as T;
      if (accept(body)) return body;
    } catch {
      // This node is down, or without a master yet: ask the next.
    }
  }
  return undefined;
}

/** The cluster's health, waiting up to 5 s for `query`'s conditions (a timed-out wait still says where it stands). */
function clusterHealth(layout: ClusterLayout, query = ''): Promise<Health | undefined> {
  return askAnyNode<Health>(
    layout,
    `/_cluster/health?master_timeout=5s${query}`,
    (body) => typeof body?.status === 'string' && typeof body.number_of_nodes === 'number',
  );
}

async function joinedNodes(layout: ClusterLayout): Promise<string[] | undefined> {
  const rows = await askAnyNode<{ name: string }[]>(
    layout,
    '/_cat/nodes?h=name&format=json&master_timeout=5s',
    Array.isArray,
  );
  return rows?.map((row) => row.name);
}

const rank = { red: 0, yellow: 1, green: 2 } as const;

/**
 * Waits until every node has joined (within `formSeconds`) and the cluster is at least `want`
 * (within `statusSeconds` more); fails at once when a node being started stops. Errors carry the
 * log tails of the nodes that failed.
 */
async function waitForCluster(
  layout: ClusterLayout,
  starting: NodeLayout[],
  want: 'yellow' | 'green',
  formSeconds: number,
  statusSeconds: number,
): Promise<Health> {
  const count = layout.nodes.length;
  const began = Date.now();
  let formedAt: number | undefined;
  const what = layout.single
    ? `Elasticsearch on ${layout.nodes[0].url}`
    : `the ${count}-node cluster ${layout.clusterName}`;
  for (;;) {
    const stopped = starting.filter((node) => livePid(node) === undefined);
    if (stopped.length > 0) {
      throw new Error(
        `${what}: ${stopped.map((node) => `${node.name} (port ${node.httpPort})`).join(', ')} stopped while ` +
          `starting:\n${tailsOf(stopped)}`,
      );
    }
    const health = await clusterHealth(layout, `&wait_for_nodes=%3E%3D${count}&wait_for_status=${want}&timeout=5s`);
    if (health && health.number_of_nodes >= count) {
      if (formedAt === undefined) {
        formedAt = Date.now();
        if (layout.formedFile && !existsSync(layout.formedFile))
          writeFileSync(layout.formedFile, `${layout.clusterName} formed ${new Date().toISOString()}\n`);
      }
      if (rank[health.status] >= rank[want]) return health;
    }
    if (formedAt === undefined && Date.now() - began > formSeconds * 1000) {
      const joined = await joinedNodes(layout);
      const missing = joined ? layout.nodes.filter((node) => !joined.includes(node.name)) : layout.nodes;
      const state = joined
        ? `${joined.length} of ${count} nodes joined (${joined.join(', ') || 'none'})`
        : 'no node answers with a cluster (no master elected)';
      throw new Error(
        `${what} did not ${layout.single ? 'answer' : 'form'} within ${formSeconds} s: ${state}:\n${tailsOf(missing)}`,
      );
    }
    if (formedAt !== undefined && Date.now() - formedAt > statusSeconds * 1000) {
      const explanation = await askAnyNode<{ index?: string; shard?: number; allocate_explanation?: string }>(
        layout,
        '/_cluster/allocation/explain',
        (body) => typeof body?.index === 'string',
      );
      throw new Error(
        `${what} did not reach ${want} within ${statusSeconds} s of forming: ` +
          `status ${health?.status ?? 'unknown'}, ` +
          `${health?.unassigned_shards ?? '?'} unassigned shards` +
          (explanation
            ? `; e.g. shard ${explanation.shard} of ${explanation.index}: ${explanation.allocate_explanation}`
            : ''),
      );
    }
    // A node that answers holds each health request up to 5 s; one that does not fails at once.
    if (!health) await sleep(500);
  }
}

/** Starts `missing` together (so that a first cluster forms at once); stops them all if one fails. */
async function launchNodes(layout: ClusterLayout, missing: NodeLayout[], heap: string): Promise<void> {
  if (!layout.single) {
    // A taken transport port would only show once the node has booted, after the others waited for it.
    const busy = (
      await Promise.all(
        missing.map(async (node) => ((await acceptsConnections('127.0.0.1', node.transportPort)) ? node : undefined)),
      )
    ).filter((node): node is NodeLayout => node !== undefined);
    if (busy.length > 0) {
      throw new Error(
        `transport port${busy.length > 1 ? 's' : ''} ` +
          `${busy.map((node) => `${node.transportPort} (of ${node.name})`).join(', ')} ` +
          `${busy.length > 1 ? 'are' : 'is'} taken by another process: stop it, or set ES_URL to other ports ` +
          '(transport ports are the HTTP ports + 100)',
      );
    }
  }
  const version = elasticVersion();
  const home = fetchDistribution(version);
  for (const node of missing) {
    for (const dir of [node.dataDir, node.logsDir, join(node.runDir, 'tmp')]) mkdirSync(dir, { recursive: true });
    rmSync(node.pidFile, { force: true });
  }
  mkdirSync(backupsDir, { recursive: true });
  if (layout.formedFile) mkdirSync(resolve(layout.formedFile, '..'), { recursive: true });
  const user = ensureEngineUser([
    home,
    backupsDir,
    ...missing.flatMap((node) => [node.dataDir, node.logsDir, node.runDir]),
  ]);
  if (missing.length > 1) ensureKeystore(home, user);
  const formed = layout.formedFile === undefined || existsSync(layout.formedFile);
  log(
    `starting Elasticsearch ${version}: ${missing.map((node) => `${node.name} on ${node.url}`).join(', ')}` +
      `${layout.single ? '' : ` (cluster ${layout.clusterName}${formed ? '' : ', first start'})`}` +
      ` (heap ${heap}${missing.length > 1 ? ' each' : ''}${user ? `, user ${user}` : ''})`,
  );
  const launches = await Promise.allSettled(missing.map((node) => launchNode(layout, node, home, heap, user, formed)));
  const failed = missing.filter((_node, i) => launches[i].status === 'rejected');
  if (failed.length > 0) {
    const reasons = failed
      .map((node) => `${node.name}: ${(launches[missing.indexOf(node)] as PromiseRejectedResult).reason.message}`)
      .join(', ');
    await stopNodes(missing);
    throw new Error(`Elasticsearch did not start (${reasons}):\n${tailsOf(failed)}`);
  }
}

/**
 * How a start ended. `reused`: every node already answered, nothing was started. `started`: the
 * names of the nodes this call started (all of them on a first start; after a node was killed,
 * only that one). `pid`: the first node's, for one node the node's.
 */
export interface StartResult {
  reused: boolean;
  pid?: number;
  started: string[];
  nodes: ClusterNode[];
  seconds: number;
}

const portRange = (layout: ClusterLayout): string =>
  layout.single
    ? `port ${layout.nodes[0].httpPort}`
    : `ports ${layout.nodes[0].httpPort}-${layout.nodes[layout.nodes.length - 1].httpPort}`;

/**
 * Starts the project's Elasticsearch on 127.0.0.1 from the first port of `esUrl`: one node
 * (`nodes` = 1, discovery.type=single-node), or a cluster of `nodes` master-eligible nodes on
 * consecutive ports, each with `heap` of heap. Idempotent: when every node answers it reuses them;
 * when some of a cluster's nodes are down (killed), it starts only those. Returns once the node
 * answers at yellow, or once the cluster has every node and is green; throws with the log tails
 * of the nodes that failed (and stops what it started) when that does not happen in time.
 * `home`: the folder of the nodes' data, logs and pid files, instead of the engine root's.
 */
export async function startEngine(
  esUrl: string,
  heap = '1g',
  nodes = 1,
  options: { home?: string } = {},
): Promise<StartResult> {
  const began = Date.now();
  const layout = clusterLayout(esUrl, nodes, options.home);
  const found = await Promise.all(
    layout.nodes.map(async (node) => ({ node, probe: await probe(endpointOf(node.url)), pid: livePid(node) })),
  );
  for (const { node, probe: answer, pid } of found) {
    if (answer.state !== 'other') continue;
    // A cluster node's pid file is its port's own; the single node's is not tied to one port.
    if (!layout.single && pid !== undefined) {
      throw new Error(
        `node ${node.name} (pid ${pid}) holds port ${node.httpPort} but does ` +
          `not answer (${answer.detail}): is it frozen (SIGSTOP) or overloaded?`,
      );
    }
    throw new Error(
      `port ${node.httpPort} on ${layout.host} is taken by something that is ` +
        `not Elasticsearch (${answer.detail}); stop it or set ES_URL to ` +
        `another port`,
    );
  }
  // The client would send requests to a node listed in ES_URL that is not one of these.
  const ports = new Set(layout.nodes.map((node) => node.httpPort));
  const stray = engineNodes(esUrl).filter((url) => {
    const endpoint = endpointOf(url);
    return !localHosts.includes(endpoint.host) || !ports.has(endpoint.port);
  });
  const strayMessage =
    `ES_URL lists ${stray.join(', ')}, outside the ${portRange(layout)} ` +
    `that ES_NODES=${nodes} runs: set ES_NODES to the number of nodes ` +
    `ES_URL lists, on consecutive ports from its first`;
  const answering = found.filter((f) => f.probe.state === 'elasticsearch');
  if (answering.length === found.length) {
    // Nodes that answer are reused as they are (a remote cluster listed in ES_URL included).
    if (!layout.single && stray.length > 0) log(`warning: ${strayMessage}`);
    const statuses = [...new Set(answering.map((f) => (f.probe.state === 'elasticsearch' ? f.probe.status : '')))].join(
      '/',
    );
    if (layout.single) {
      log(`an Elasticsearch node already answers on ${layout.nodes[0].url} (status ${statuses}); reusing it`);
    } else {
      const clusters = [
        ...new Set(
          answering.map((f) => (f.probe.state === 'elasticsearch' ? f.probe.clusterName : undefined)).filter(Boolean),
        ),
      ];
      if (clusters.length > 1)
        throw new Error(
          `${portRange(layout)} answer as nodes of different clusters ` +
            `(${clusters.join(', ')}), not as one cluster of ${nodes} nodes`,
        );
      // Ours: a node that has just come back may not have joined yet.
      if (answering.some((f) => f.pid !== undefined)) await waitForCluster(layout, [], 'yellow', 180, 60);
      log(
        `the ${nodes} nodes on ${portRange(layout)} already answer (cluster ` +
          `${clusters[0] ?? 'unknown'}, status ${statuses}); reusing them`,
      );
    }
    return {
      reused: true,
      pid: found[0].pid,
      started: [],
      nodes: clusterNodes(esUrl, nodes, options.home),
      seconds: (Date.now() - began) / 1000,
    };
  }
  for (const { node, probe: answer, pid } of answering) {
    if (
      answer.state !== 'elasticsearch' ||
      layout.single ||
      pid !== undefined ||
      answer.clusterName === layout.clusterName
    )
      continue;
    throw new Error(
      `port ${node.httpPort} answers as a node of ` +
        `${answer.clusterName ? `cluster ${answer.clusterName}` : "a cluster that is not this project's"}, ` +
        `not of ${layout.clusterName}, which ES_NODES=${nodes} runs on ${portRange(layout)}: stop it, or set ` +
        'ES_URL to other ports',
    );
  }
  if (!localHosts.includes(layout.host)) {
    throw new Error(`ES_URL points at ${layout.host}, which does not answer; the local engine only runs on 127.0.0.1`);
  }
  if (stray.length > 0) throw new Error(strayMessage);
  if (layout.single && found[0].pid !== undefined) {
    throw new Error(
      `the project's single node already runs (pid ${found[0].pid}) but does ` +
        `not answer on ${layout.nodes[0].url}: it was started for another ` +
        `port, or is still starting. Stop it first: npm run es:stop`,
    );
  }
  // A cluster node whose process runs but does not answer yet is starting: wait for it, do not start it twice.
  const missing = found.filter((f) => f.probe.state === 'free' && f.pid === undefined).map((f) => f.node);
  if (missing.length > 0) await launchNodes(layout, missing, heap);
  let health: Health;
  try {
    health = await waitForCluster(layout, missing, layout.single ? 'yellow' : 'green', 180, layout.single ? 180 : 600);
  } catch (error) {
    await stopNodes(missing);
    throw error;
  }
  const seconds = (Date.now() - began) / 1000;
  const started = clusterNodes(esUrl, nodes, options.home);
  log(
    layout.single
      ? `Elasticsearch is up on ${layout.nodes[0].url} (pid ${started[0].pid}) after ${seconds.toFixed(1)} s`
      : `cluster ${layout.clusterName} is ${health.status} with ` +
          `${health.number_of_nodes} nodes on ${portRange(layout)} after ` +
          `${seconds.toFixed(1)} s (started ` +
          `${missing.map((node) => node.name).join(', ') || 'none: waited for nodes already starting'})`,
  );
  return { reused: false, pid: started[0].pid, started: missing.map((node) => node.name), nodes: started, seconds };
}

// ---------------------------------------------------------------------------------------------
// Stopping, wiping, status

/** Stops the nodes whose process runs (SIGTERM, SIGKILL after 60 s) and waits until they are gone. */
async function stopNodes(nodes: NodeLayout[]): Promise<NodeLayout[]> {
  const running = nodes
    .map((node) => ({ node, pid: livePid(node) }))
    .filter((r): r is { node: NodeLayout; pid: number } => r.pid !== undefined);
  for (const { pid } of running) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  const waitGone = async (seconds: number): Promise<void> => {
    const deadline = Date.now() + seconds * 1000;
    while (running.some(({ pid }) => processLives(pid)) && Date.now() < deadline) await sleep(250);
  };
  await waitGone(60);
  for (const { node, pid } of running.filter((r) => processLives(r.pid))) {
    log(`${node.name} (pid ${pid}) ignored SIGTERM for 60 s; killing it`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await waitGone(10);
  for (const node of nodes) if (livePid(node) === undefined) rmSync(node.pidFile, { force: true });
  return running.map((r) => r.node);
}

/**
 * Deletes the data of the project's nodes for `esUrl` and `nodes` (logs stay), so the next start
 * is an empty cluster that forms anew. Refuses while any of them runs or answers.
 */
export async function wipeEngine(esUrl = 'http://127.0.0.1:9200', nodes = 1, home?: string): Promise<string[]> {
  const layout = clusterLayout(esUrl, nodes, home);
  const running = layout.nodes.filter((node) => livePid(node) !== undefined);
  const answering = (
    await Promise.all(layout.nodes.map(async (node) => ({ node, answer: await probe(endpointOf(node.url)) })))
  )
    .filter(({ answer }) => answer.state === 'elasticsearch' && answer.clusterName === layout.clusterName)
    .map(({ node }) => node);
  const busy = [...new Set([...running, ...answering])];
  if (busy.length > 0)
    throw new Error(
      `cannot wipe ${layout.clusterName}: ` +
        `${busy.map((node) => node.name).join(', ')} still run; stop them ` +
        `first (npm run es:stop)`,
    );
  const wiped = layout.nodes.map((node) => node.dataDir).filter(existsSync);
  for (const dir of wiped) rmSync(dir, { recursive: true, force: true });
  if (layout.formedFile) rmSync(layout.formedFile, { force: true });
  return wiped;
}

/**
 * Stops every node the project runs for `esUrl` and `nodes` (one node: the single node, whatever
 * its port, or the one started with `home`) and waits until their processes are gone; `wipe` then
 * deletes their data. Resolves true when it stopped at least one node.
 */
export async function stopEngine(
  esUrl = 'http://127.0.0.1:9200',
  nodes = 1,
  options: { wipe?: boolean; home?: string } = {},
): Promise<boolean> {
  const stopped = await stopNodes(clusterLayout(esUrl, nodes, options.home).nodes);
  log(
    stopped.length > 0
      ? `stopped ${stopped.map((node) => node.name).join(', ')}`
      : 'no node started by this project is running',
  );
  if (options.wipe) {
    const wiped = await wipeEngine(esUrl, nodes, options.home);
    log(wiped.length > 0 ? `wiped ${wiped.join(', ')}` : 'no data to wipe');
  }
  return stopped.length > 0;
}

/** `method` `path` (with a JSON `body`) on the first of `nodes` that answers; throws with the last failure. */
async function sendAnyNode(nodes: NodeLayout[], method: string, path: string, body?: unknown): Promise<unknown> {
  let failure = 'no node to ask';
  for (const node of nodes) {
    try {
      const response = await fetch(`${node.url}${path}`, {
        method,
        signal: AbortSignal.timeout(120_000),
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const answer = (await response.json()) as unknown;
      if (response.ok) return answer;
      failure = `${node.name}: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`;
    } catch (error) {
      failure = `${node.name}: ${(error as Error).message}`;
    }
  }
  throw new Error(`${method} ${path} failed on every node (${failure})`);
}

/**
 * Restarts one node of the local cluster with the steps of docs/scale.md#a-rolling-restart: replica
 * allocation off (`cluster.routing.allocation.enable: primaries`), a flush, the node stopped, started
 * again, waited for until it has joined, allocation back on, and the cluster waited for until green.
 * `say` hears each step.
 */
export async function restartNode(
  esUrl: string,
  nodes: number,
  name: string,
  heap = '1g',
  say: (message: string) => void = log,
  home?: string,
): Promise<void> {
  const layout = clusterLayout(esUrl, nodes, home);
  const node = layout.nodes.find((each) => each.name === name);
  if (!node || layout.single)
    throw new Error(`${name} is not a node of the local ${nodes}-node cluster on ${portRange(layout)}`);
  const others = layout.nodes.filter((each) => each !== node);
  const allocation = (value: string | null): Promise<unknown> =>
    sendAnyNode(others, 'PUT', '/_cluster/settings', {
      persistent: { 'cluster.routing.allocation.enable': value },
    });
  say(`${name}: 1. replica allocation off (cluster.routing.allocation.enable: primaries)`);
  await allocation('primaries');
  say(`${name}: 2. flush`);
  await sendAnyNode(others, 'POST', '/_flush');
  say(`${name}: 3. stop the node`);
  await stopNodes([node]);
  say(`${name}: 4. start the node`);
  await launchNodes(layout, [node], heap);
  say(`${name}: 5. wait for the node to join`);
  await waitForCluster(layout, [node], 'yellow', 180, 600);
  say(`${name}: 6. replica allocation on again`);
  await allocation(null);
  say(`${name}: 7. wait for green`);
  await waitForCluster(layout, [], 'green', 180, 600);
}

export interface EngineStatus {
  version: string;
  cluster: string;
  /** Each node, with whether an Elasticsearch answers on its port (a node the project did not start counts). */
  nodes: (ClusterNode & { answers: boolean })[];
  /** The cluster's health as one of its nodes reports it; missing when none can (all down, or no master). */
  health?: { cluster: string; status: string; nodes: number; dataNodes: number; unassignedShards: number };
  /** Why nodes that answer cannot tell the health, e.g. master_not_discovered_exception. */
  healthError?: string;
}

/** The project's nodes for `esUrl` and `nodes`, and the cluster's health. */
export async function engineStatus(esUrl: string, nodes = 1): Promise<EngineStatus> {
  const layout = clusterLayout(esUrl, nodes);
  const listed = clusterNodes(esUrl, nodes);
  const answers = await Promise.all(
    listed.map(async (node) => (await probe(endpointOf(node.url))).state === 'elasticsearch'),
  );
  const health = await clusterHealth(layout);
  const healthError =
    health || !answers.some(Boolean)
      ? undefined
      : await askAnyNode<{ error?: { type?: string } }>(
          layout,
          '/_cluster/health?master_timeout=2s',
          (body) => typeof body?.error?.type === 'string',
        ).then((body) =>
          body?.error?.type === 'master_not_discovered_exception'
            ? 'master_not_discovered_exception: no master, fewer than a majority of the master-eligible nodes run'
            : (body?.error?.type ?? 'unknown'),
        );
  return {
    version: elasticVersion(),
    cluster: layout.clusterName,
    nodes: listed.map((node, i) => ({ ...node, answers: answers[i] })),
    ...(health
      ? {
          health: {
            cluster: health.cluster_name,
            status: health.status,
            nodes: health.number_of_nodes,
            dataNodes: health.number_of_data_nodes,
            unassignedShards: health.unassigned_shards,
          },
        }
      : {}),
    ...(healthError ? { healthError } : {}),
  };
}

/**
 * Deletes every index whose name starts with `prefix-` (by name: the node has no wildcard deletes in
 * production), twenty names a request: a test run leaves about a hundred indices, and all their
 * names in one request line pass the engine's 4 kB limit (too_long_http_line_exception). Returns
 * the names deleted.
 */
export async function deleteIndicesByPrefix(esUrl: string, prefix: string): Promise<string[]> {
  const client = new Client({ nodes: engineNodes(esUrl) });
  try {
    const indices = Object.keys(await client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all' }));
    for (let start = 0; start < indices.length; start += 20) {
      await client.indices.delete({ index: indices.slice(start, start + 20).join(',') }, { ignore: [404] });
    }
    return indices;
  } finally {
    await client.close();
  }
}
