/**
 * The one typed configuration of chemxref, read once from the environment.
 * Every key has a default and a one-line description; a bad value fails fast naming the variable.
 */

export class ConfigError extends Error {}

interface Setting<T> {
  description: string;
  defaultValue: string;
  parse: (raw: string, name: string) => T;
}

function positiveInteger(raw: string, name: string): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  }
  return Number(raw);
}

function port(raw: string, name: string): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`${name} must be a TCP port (0-65535), got "${raw}"`);
  }
  return Number(raw);
}

function url(raw: string, name: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    return raw.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
}

/** One http(s) URL, or several separated by commas (the nodes of a cluster). */
function urls(raw: string, name: string): string {
  const list = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (list.length === 0)
    throw new ConfigError(`${name} must be an http(s) URL or a comma-separated list of them, got "${raw}"`);
  return list
    .map((part) => {
      try {
        return url(part, name);
      } catch {
        throw new ConfigError(`${name} must be an http(s) URL or a comma-separated list of them; "${part}" is not one`);
      }
    })
    .join(',');
}

/** The node URLs of ES_URL, in the order given. */
export function engineNodes(esUrl: string): string[] {
  return esUrl.split(',');
}

function nonNegativeInteger(raw: string, name: string): number {
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new ConfigError(`${name} must be a whole number (0 or more), got "${raw}"`);
  return Number(raw);
}

/** `auto`, or a number of replicas. */
function replicas(raw: string, name: string): number | 'auto' {
  return raw.toLowerCase() === 'auto' ? 'auto' : nonNegativeInteger(raw, name);
}

function indexPrefix(raw: string, name: string): string {
  // Elasticsearch index names: lower case, no leading -, _ or +, none of \/*?"<>| , # or space.
  if (!/^[a-z0-9][a-z0-9._-]{0,100}$/.test(raw)) {
    throw new ConfigError(`${name} must be a lower-case index name prefix (a-z, 0-9, ., _, -), got "${raw}"`);
  }
  return raw;
}

function heap(raw: string, name: string): string {
  if (!/^[0-9]+[mg]$/i.test(raw))
    throw new ConfigError(`${name} must be a JVM heap size such as 512m or 1g, got "${raw}"`);
  return raw.toLowerCase();
}

function byteSize(raw: string, name: string): number {
  const match = /^([0-9]+)\s*(b|kb|mb|gb)?$/i.exec(raw);
  if (!match) throw new ConfigError(`${name} must be a size such as 16kb, 1mb or 2gb, got "${raw}"`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Number(match[1]) * unit;
}

/** `true` or `false` (also 1/0, yes/no). */
function boolean(raw: string, name: string): boolean {
  const value = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A share such as `50%` or `0.5`, as a fraction from 0 to 1. */
function fraction(raw: string, name: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*(%?)$/.exec(raw);
  const value = match ? Number(match[1]) / (match[2] ? 100 : 1) : NaN;
  if (!(value >= 0 && value <= 1))
    throw new ConfigError(`${name} must be a share such as 50% or 0.5 (0 to 1), got "${raw}"`);
  return value;
}

/** A duration such as `500ms`, `30s`, `10m`, `24h` (a bare number is milliseconds), in milliseconds. */
function duration(raw: string, name: string): number {
  const match = /^([0-9]+)\s*(ms|s|m|h|d)?$/i.exec(raw);
  if (!match) throw new ConfigError(`${name} must be a duration such as 3000ms, 30s, 10m or 24h, got "${raw}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 'ms').toLowerCase() as 'ms'];
  return Number(match[1]) * unit;
}

function optional(raw: string): string | undefined {
  return raw === '' ? undefined : raw;
}

const settings = {
  ES_URL: {
    description:
      'Elasticsearch URL, or the URLs of several nodes of one cluster ' +
      'separated by commas; `npm run es:start` takes its first port from it',
    defaultValue: 'http://127.0.0.1:9200',
    parse: urls,
  },
  ES_USERNAME: {
    description: 'Elasticsearch user (basic auth), if the engine has security on',
    defaultValue: '',
    parse: optional,
  },
  ES_PASSWORD: { description: 'Elasticsearch password (basic auth)', defaultValue: '', parse: optional },
  ES_API_KEY: {
    description: 'Elasticsearch API key (instead of user and password)',
    defaultValue: '',
    parse: optional,
  },
  ES_INDEX_PREFIX: {
    description: 'prefix of every index and alias chemxref creates',
    defaultValue: 'chemxref',
    parse: indexPrefix,
  },
  ES_NODES: {
    description: "how many nodes `npm run es:start` starts, as one cluster, on ports from ES_URL's first port upward",
    defaultValue: '1',
    parse: positiveInteger,
  },
  ES_SHARDS: {
    description:
      'primary shards of the structures index, and the most a release of ' +
      'assignments gets (see RELEASE_SHARD_ASSIGNMENTS); the small indices ' +
      'keep one',
    defaultValue: '1',
    parse: positiveInteger,
  },
  RELEASE_SHARD_ASSIGNMENTS: {
    description:
      'a release index gets one primary shard per this many assignments it ' +
      'is expected to hold, at most ES_SHARDS (200M assignments are about 20 ' +
      "GB, inside Elastic's 10-50 GB a shard): every key lookup searches " +
      'every shard of every release',
    defaultValue: '200000000',
    parse: positiveInteger,
  },
  ES_REPLICAS: {
    description: 'replicas of every index: a number, or auto (0 on one data node, 1 on two or more)',
    defaultValue: 'auto',
    parse: replicas,
  },
  ES_GREEN_TIMEOUT: {
    description:
      'how long a load waits for a new release to be fully replicated (green) before it fails instead of publishing it',
    defaultValue: '30m',
    parse: duration,
  },
  BACKUP_REPOSITORY: {
    description:
      'the snapshot repository `npm run backup` and `npm run restore` use; the default one is registered when ' +
      "missing, as a filesystem repository under the nodes' path.repo",
    defaultValue: 'chemxref-backups',
    parse: (raw: string, name: string): string => {
      if (!/^[a-z0-9][a-z0-9._-]{0,100}$/.test(raw))
        throw new ConfigError(`${name} must be a repository name (a-z, 0-9, ., _, -), got "${raw}"`);
      return raw;
    },
  },
  ES_HEAP: {
    description: 'heap of each node `npm run es:start` starts (512m each for a 3-node cluster on one machine)',
    defaultValue: '1g',
    parse: heap,
  },
  PORT: { description: 'HTTP port of the API', defaultValue: '8080', parse: port },
  MAX_INCHI_LENGTH: {
    description: 'longest InChI accepted by the loaders and the API',
    defaultValue: '4000',
    parse: positiveInteger,
  },
  // Structures as input (docs/api.md): SMILES and molfiles, read by RDKit in an isolated worker of the API.
  MAX_STRUCTURE_LENGTH: {
    description: 'longest SMILES or molfile the API accepts, in characters (BODY_LIMIT bounds the request too)',
    defaultValue: '20000',
    parse: positiveInteger,
  },
  STRUCTURE_TIMEOUT_MS: {
    description:
      'a SMILES or molfile whose Standard InChI takes longer than this is ' +
      "answered 422, and the toolkit's worker replaced",
    defaultValue: '5000ms',
    parse: duration,
  },
  COMPONENT_FREQUENCY_CAP: {
    description: 'a component in more multi-component structures than this is not searched inside others',
    defaultValue: '200',
    parse: positiveInteger,
  },
  SUBSTRUCTURE_TIMEOUT_MS: {
    description: 'a substructure search stops after this long and answers the matches it found, with "complete": false',
    defaultValue: '10s',
    parse: duration,
  },
  SUBSTRUCTURE_KEPT_MOLECULES: {
    description:
      'molecules of the lowest UCIs the API keeps read between substructure searches (about 20 KB each); ' +
      '0 reads every candidate again',
    defaultValue: '20000',
    parse: nonNegativeInteger,
  },
  SIMILARITY_CONCURRENCY: {
    description:
      'similarity searches one API process runs at once; more wait their turn (1,024 at most, ' +
      'then 503), so that they never hold the engine past ENGINE_TIMEOUT_MS',
    defaultValue: '2',
    parse: positiveInteger,
  },
  CONNECTIVITY_MAX_ENTRIES: {
    description: 'most entries one connectivity search returns',
    defaultValue: '10000',
    parse: positiveInteger,
  },
  BODY_LIMIT: {
    description: 'largest request body the API accepts (b, kb, mb)',
    defaultValue: '16kb',
    parse: byteSize,
  },
  ENGINE_TIMEOUT_MS: {
    description:
      'deadline of each engine request the API makes (loads keep their long ' +
      'timeouts); a frozen engine gives a 503 after this',
    defaultValue: '3000ms',
    parse: duration,
  },
  MAX_RELEASE_DROP: {
    description:
      "a load that would drop more than this share of a source's current ids is refused (unless --allow-shrink)",
    defaultValue: '50%',
    parse: fraction,
  },
  MAX_REJECT_RATIO: {
    description: 'a load that rejects more than this share of its rows is refused (unless --allow-shrink)',
    defaultValue: '20%',
    parse: fraction,
  },
  REJECTS_INDEXED: {
    description:
      'rejected rows of each load also indexed in the rejects index, for ' +
      'Kibana (the first this many; the count and the rejects file stay ' +
      'whole); 0 for none',
    defaultValue: '100000',
    parse: (raw: string, name: string): number => (raw === '0' ? 0 : positiveInteger(raw, name)),
  },
  REJECTS_KEPT_LOADS: {
    description: "how many loads' rejects the rejects index keeps (the most recent loads that rejected rows)",
    defaultValue: '50',
    parse: positiveInteger,
  },
  LOAD_PROGRESS_EVERY: {
    description: 'how often a load without a terminal writes a JSON progress line on stderr',
    defaultValue: '10s',
    parse: duration,
  },
  RELEASE_GRACE: {
    description:
      'how long a replaced release that no source can roll back to any more is kept after it stopped ' +
      'serving (searches already routed to it finish) before a load or `npm run load -- doctor` deletes it; ' +
      "a source's previous release stays as long as it is one",
    defaultValue: '24h',
    parse: duration,
  },
  SYNC_BASE_URL: {
    description:
      "the folder `npm run sync` fetches UniChem's table dumps from (source.tsv.gz, structure.tsv.gz, " +
      'reference.tsv.gz); `--base-url` overrides it',
    defaultValue: 'https://ftp.ebi.ac.uk/pub/databases/chembl/UniChem/data/table_dumps',
    parse: url,
  },
  KIBANA_URL: {
    description: "the Kibana `npm run kibana:setup` installs the curators' saved objects into",
    defaultValue: 'http://127.0.0.1:5601',
    parse: url,
  },
  KIBANA_USERNAME: {
    description: 'Kibana user (basic auth) for `npm run kibana:setup`, if Kibana has security on',
    defaultValue: '',
    parse: optional,
  },
  KIBANA_PASSWORD: { description: 'Kibana password (basic auth)', defaultValue: '', parse: optional },
  KIBANA_SPACE: {
    description: 'the Kibana space `npm run kibana:setup` installs into (empty: the default space)',
    defaultValue: '',
    parse: optional,
  },
  KIBANA_WAIT: {
    description: 'how long `npm run kibana:setup` waits for Kibana to be ready',
    defaultValue: '5m',
    parse: duration,
  },
  CHEMXREF_URL: {
    description: "where curators' browsers reach this API: the links Kibana shows on InChIKeys, UCIs and compound ids",
    defaultValue: 'http://127.0.0.1:8080',
    parse: url,
  },
  BATCH_MAX_QUERIES: {
    description: 'most queries one POST /api/v1/batch takes (more: 413, before any is answered)',
    defaultValue: '10000',
    parse: positiveInteger,
  },
  BATCH_BODY_LIMIT: {
    description: 'largest body POST /api/v1/batch accepts (b, kb, mb)',
    defaultValue: '32mb',
    parse: byteSize,
  },
  BATCH_CONCURRENCY: {
    description:
      'queries of one batch started together, in waves (their searches go to ' +
      'the engine together, merged); at most twice this are answered or wait ' +
      'to be sent at once',
    defaultValue: '256',
    parse: positiveInteger,
  },
  JOBS_ENABLED: {
    description: 'whether POST /api/v1/jobs takes jobs (false: 404 for every jobs path)',
    defaultValue: 'true',
    parse: boolean,
  },
  JOB_MAX_QUERIES: { description: 'most queries one job takes', defaultValue: '1000000', parse: positiveInteger },
  JOB_BODY_LIMIT: {
    description: 'largest body POST /api/v1/jobs accepts (b, kb, mb)',
    defaultValue: '256mb',
    parse: byteSize,
  },
  JOB_MAX_ACTIVE: {
    description: 'most jobs queued or running at once, in all (more: 429 with Retry-After)',
    defaultValue: '4',
    parse: positiveInteger,
  },
  JOB_CONCURRENCY: {
    description:
      'queries of a job started together, in waves, as BATCH_CONCURRENCY: ' +
      'its share of the engine, next to the lookups (jobs run one at a time)',
    defaultValue: '8',
    parse: positiveInteger,
  },
  JOB_MAX_BYTES: {
    description: 'most bytes of results one job keeps (b, kb, mb); a job that would pass it fails, saying so',
    defaultValue: '2gb',
    parse: byteSize,
  },
  JOBS_MAX_BYTES: {
    description: 'most bytes of results all kept jobs hold together; a new job is refused (507) while they hold more',
    defaultValue: '20gb',
    parse: byteSize,
  },
  JOB_TTL: {
    description: 'how long a job and its results are kept after it is submitted',
    defaultValue: '7d',
    parse: duration,
  },
  HOST: {
    description:
      "address the API binds to: 127.0.0.1 serves this machine only, 0.0.0.0 (the Docker image's) every interface",
    defaultValue: '127.0.0.1',
    parse: (raw: string, name: string): string => {
      const host = raw.replace(/^\[(.*)\]$/, '$1');
      if (!/^[A-Za-z0-9._:-]{1,253}$/.test(host))
        throw new ConfigError(
          `${name} must be an IP address or a host name such as 127.0.0.1, 0.0.0.0 or ::, got "${raw}"`,
        );
      return host;
    },
  },
  RATE_LIMIT: {
    description:
      'cost units each client (IP address) may spend a minute, 0 for no ' +
      'limit; a lookup costs 1, a connectivity search 5, a legacy mapping 20',
    defaultValue: '0',
    parse: (raw: string, name: string): number => (raw === '0' ? 0 : positiveInteger(raw, name)),
  },
  TRUST_PROXY: {
    description:
      'reverse proxies in front of the API whose X-Forwarded-For names the ' +
      'client (for RATE_LIMIT): a number of hops, or addresses and subnets ' +
      '(10.0.0.0/8, loopback); empty: none',
    defaultValue: '',
    parse: (raw: string, name: string): number | string[] | false => {
      if (raw === '' || raw === '0') return false;
      if (/^[0-9]{1,2}$/.test(raw)) return Number(raw);
      const list = raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      if (list.every((item) => /^(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/[0-9]{1,3})?)$/.test(item)))
        return list;
      throw new ConfigError(
        `${name} must be a number of proxies or a list of addresses and ` +
          `subnets such as 10.0.0.0/8,loopback, got "${raw}"`,
      );
    },
  },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['parse']> };

/** Reads and validates every setting from `env`; throws ConfigError naming the first bad variable. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = (env[name] ?? setting.defaultValue).trim();
    config[name] = setting.parse(raw === '' ? setting.defaultValue : raw, name);
  }
  return config as Config;
}

/** The settings with their defaults and descriptions, for docs/operations.md and `--help` texts. */
export function describeSettings(): { name: string; defaultValue: string; description: string }[] {
  return Object.entries(settings).map(([name, s]) => ({
    name,
    defaultValue: s.defaultValue,
    description: s.description,
  }));
}
