/**
 * A real Elasticsearch node for development, tests and CI, without Docker.
 *
 * The distribution is Elastic's integ-test zip from Maven Central (the real bin/elasticsearch and
 * jars, no bundled JDK), fetched once with maven-dependency-plugin and unpacked under `.engine/`.
 * The engine version lives in `.env` (ELASTIC_VERSION), which docker-compose reads too.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

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
const dataDir = join(engineRoot, 'data');
const logsDir = join(engineRoot, 'logs');
const runDir = join(engineRoot, 'run');
const pidFile = join(runDir, 'elasticsearch.pid');
const engineUser = 'chemxref-es';
const clusterName = 'chemxref-local';

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
    const result = spawnSync('mvn', ['-B', '-q',
      // Maven 3.8 would otherwise fall back to an old dependency plugin without `copy -Dartifact`.
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
      `-Dartifact=org.elasticsearch.distribution.integ-test-zip:elasticsearch:${version}:zip`,
      `-DoutputDirectory=${downloadDir}`], { stdio: 'inherit', cwd: engineRoot });
    if (result.error) throw new Error(`cannot run Maven (mvn): ${result.error.message}. Install Maven 3.8+ and a JDK 17+.`);
    if (result.status !== 0 || !existsSync(zip)) throw new Error(`Maven could not fetch Elasticsearch ${version} (exit ${result.status})`);
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

export interface Endpoint { host: string; port: number; url: string }

export function endpointOf(esUrl: string): Endpoint {
  const parsed = new URL(esUrl);
  return { host: parsed.hostname, port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)), url: esUrl.replace(/\/+$/, '') };
}

export type Probe = { state: 'elasticsearch'; status: string } | { state: 'other'; detail: string } | { state: 'free' };

/** What answers on the port: an Elasticsearch node (by its product header), something else, or nothing. */
export async function probe(endpoint: Endpoint): Promise<Probe> {
  try {
    const response = await fetch(`${endpoint.url}/_cluster/health`, { signal: AbortSignal.timeout(3000) });
    const body = await response.text();
    if (response.headers.get('x-elastic-product') === 'Elasticsearch') {
      let status = 'unknown';
      try { status = JSON.parse(body).status ?? status; } catch { /* an auth error body is not health */ }
      return { state: 'elasticsearch', status };
    }
    return { state: 'other', detail: `HTTP ${response.status} without the X-elastic-product header` };
  } catch {
    const open = await new Promise<boolean>((done) => {
      const socket = connect(endpoint.port, endpoint.host);
      socket.setTimeout(1000);
      socket.once('connect', () => { socket.destroy(); done(true); });
      socket.once('error', () => done(false));
      socket.once('timeout', () => { socket.destroy(); done(false); });
    });
    return open ? { state: 'other', detail: 'the port accepts connections but does not speak HTTP like Elasticsearch' } : { state: 'free' };
  }
}

function runningPid(): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try { process.kill(pid, 0); return pid; } catch { return undefined; }
}

/** When run as root the node runs as a dedicated system user (Elasticsearch refuses root). */
function ensureEngineUser(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync('id', ['-u', engineUser]).status !== 0) {
    log(`creating system user ${engineUser}`);
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', engineUser]);
  }
  // The engine user must be able to reach .engine through every parent folder.
  for (let dir = engineRoot; dir !== '/'; dir = resolve(dir, '..')) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(`${dir} is not searchable by other users, so ${engineUser} cannot reach ${engineRoot}: chmod o+x ${dir}`);
    }
  }
  execFileSync('chown', ['-R', `${engineUser}:`, engineRoot]);
  return engineUser;
}

function logTail(lines = 60): string {
  const candidates = [join(logsDir, `${clusterName}.log`), join(runDir, 'console.log')];
  return candidates.filter(existsSync).map((file) => {
    const all = readFileSync(file, 'utf8').split('\n');
    return `--- ${file} (last ${lines} lines) ---\n${all.slice(-lines).join('\n')}`;
  }).join('\n') || '(no log written)';
}

async function waitForYellow(endpoint: Endpoint, seconds: number, alive: () => boolean): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${endpoint.url}/_cluster/health?wait_for_status=yellow&timeout=5s`, { signal: AbortSignal.timeout(8000) });
      if (response.ok && ((await response.json()) as { status: string }).status !== 'red') return true;
    } catch { /* not listening yet */ }
    if (!alive()) return false;
    await sleep(1000);
  }
  return false;
}

export interface StartResult { reused: boolean; pid?: number }

/**
 * Starts a single-node engine on 127.0.0.1 at the port of `esUrl`, or reuses one already answering.
 * Throws with the tail of the node's log when it does not come up.
 */
export async function startEngine(esUrl: string, heap = '1g'): Promise<StartResult> {
  const endpoint = endpointOf(esUrl);
  const found = await probe(endpoint);
  if (found.state === 'elasticsearch') {
    log(`an Elasticsearch node already answers on ${endpoint.url} (status ${found.status}); reusing it`);
    return { reused: true, pid: runningPid() };
  }
  if (found.state === 'other') {
    throw new Error(`port ${endpoint.port} on ${endpoint.host} is taken by something that is not Elasticsearch (${found.detail}); stop it or set ES_URL to another port`);
  }
  if (!['127.0.0.1', 'localhost'].includes(endpoint.host)) {
    throw new Error(`ES_URL points at ${endpoint.host}, which does not answer; the local engine only runs on 127.0.0.1`);
  }
  const version = elasticVersion();
  const home = fetchDistribution(version);
  for (const dir of [dataDir, logsDir, runDir]) mkdirSync(dir, { recursive: true });
  rmSync(pidFile, { force: true });
  const user = ensureEngineUser();
  const settings = [
    `cluster.name=${clusterName}`, `node.name=${clusterName}`,
    'network.host=127.0.0.1', `http.port=${endpoint.port}`, 'transport.port=9300-9399',
    'discovery.type=single-node',
    `path.data=${dataDir}`, `path.logs=${logsDir}`,
    'cluster.routing.allocation.disk.threshold_enabled=false',
    // Tests delete their own indices by name; this local node only.
    'action.destructive_requires_name=false',
    // Only x-pack keys whose module ships in the integ-test distribution (x-pack-core, x-pack-security).
    'xpack.security.enabled=false',
  ].flatMap((s) => ['-E', s]);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ES_JAVA_HOME: javaHome(),
    ES_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`,
    ES_TMPDIR: join(runDir, 'tmp'),
    HOME: runDir,
  };
  mkdirSync(env.ES_TMPDIR, { recursive: true });
  if (user) execFileSync('chown', ['-R', `${user}:`, runDir]);
  const command = join(home, 'bin', 'elasticsearch');
  const args = ['-d', '-p', pidFile, ...settings];
  log(`starting Elasticsearch ${version} on ${endpoint.url} (heap ${heap}${user ? `, user ${user}` : ''})`);
  const [file, argv] = user
    ? ['runuser', ['-u', user, '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), command, ...args]]
    : [command, args];
  const launched = spawnSync(file, argv, { env: user ? { PATH: env.PATH } : env, encoding: 'utf8', cwd: runDir });
  writeFileSync(join(runDir, 'console.log'), `${launched.stdout ?? ''}${launched.stderr ?? ''}`);
  if (launched.status !== 0) {
    throw new Error(`Elasticsearch did not start (exit ${launched.status}):\n${logTail()}`);
  }
  const up = await waitForYellow(endpoint, 180, () => runningPid() !== undefined || !existsSync(pidFile));
  if (!up) {
    const tail = logTail();
    await stopEngine();
    throw new Error(`Elasticsearch did not reach yellow on ${endpoint.url}:\n${tail}`);
  }
  const pid = runningPid();
  log(`Elasticsearch is up on ${endpoint.url} (pid ${pid})`);
  return { reused: false, pid };
}

/** Stops the node this project started (from its pid file) and waits until the process is gone. */
export async function stopEngine(): Promise<boolean> {
  const pid = runningPid();
  if (pid === undefined) {
    rmSync(pidFile, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try { process.kill(pid, 0); } catch { rmSync(pidFile, { force: true }); return true; }
    await sleep(250);
  }
  log(`pid ${pid} ignored SIGTERM for 60 s; killing it`);
  try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  rmSync(pidFile, { force: true });
  return true;
}

export async function engineStatus(esUrl: string): Promise<{ pid?: number; probe: Probe; version: string }> {
  return { pid: runningPid(), probe: await probe(endpointOf(esUrl)), version: elasticVersion() };
}
