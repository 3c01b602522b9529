import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { Metrics } from '../src/api/metrics';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

const root = join(__dirname, '..');
const readText = (path: string): string => readFileSync(join(root, path), 'utf8');

interface Panel {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { expr?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown; current?: { value?: unknown } }[] };
}
interface ComposeService {
  ports?: string[];
  volumes?: string[];
  profiles?: string[];
}

const dashboard = (): Dashboard => JSON.parse(readText('grafana/dashboards/chemxref.json')) as Dashboard;
// Merge keys on: the cluster's services are built from `<<: *cluster-node`.
const compose = (): Record<string, ComposeService> =>
  (parse(readText('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> }).services;

/** Every panel of the dashboard, those inside collapsed rows too. */
function panelsOf(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...panelsOf(panel.panels ?? [])]);
}

/** The series names a PromQL expression reads. */
function seriesOf(expr: string): string[] {
  return [...expr.matchAll(/\b((?:chemxref|process|nodejs)_[a-zA-Z0-9_:]*)\s*(?=[{[)])/g)].map((match) => match[1]);
}

/** The labels of every `by (...)` clause of a PromQL expression. */
function groupingLabelsOf(expr: string): string[] {
  return [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((match) =>
    match[1]
      .split(',')
      .map((label) => label.trim())
      .filter(Boolean),
  );
}

/** A Prometheus text exposition: the `# TYPE` of each metric, and the label names seen on each series name. */
interface Exposition {
  types: Map<string, string>;
  labels: Map<string, Set<string>>;
}

function readExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+/.exec(line);
    if (!sample) continue;
    const names = labels.get(sample[1]) ?? new Set<string>();
    for (const label of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) names.add(label[1]);
    labels.set(sample[1], names);
  }
  return { types, labels };
}

/**
 * Whether `name` is served: as samples, by its `# TYPE` line, or as the `_bucket`, `_sum` or `_count` of a histogram.
 */
function serves(exposition: Exposition, name: string): boolean {
  if (exposition.labels.has(name) || exposition.types.has(name)) return true;
  const part = /^(.+)_(?:bucket|sum|count)$/.exec(name);
  return part !== null && exposition.types.get(part[1]) === 'histogram';
}

/**
 * A labelled series that has counted nothing yet (engine errors, on a healthy engine) is served as
 * its `# TYPE` line alone, so its labels cannot be read from the API's scrape. These are read from
 * a Metrics that has seen one failed engine request instead.
 */
async function exercisedMetrics(): Promise<Exposition> {
  const metrics = new Metrics(async () => ({ loads: new Map(), sources: new Map() }));
  metrics.engineRequest('msearch', 0.01, true);
  metrics.msearchSent(2);
  return readExposition(await metrics.registry.metrics());
}

/** Prometheus adds these to every series it scrapes: they are never in the exposition itself. */
const targetLabels = new Set(['job', 'instance']);

/** The bind mounts of a compose service: host path (absolute) → path in the container. */
function bindMounts(service: ComposeService): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const volume of service.volumes ?? []) {
    const [source, target] = volume.split(':');
    if (source.startsWith('.') || source.startsWith('/')) mounts.set(target, resolve(root, source));
  }
  return mounts;
}

/** The container ports a compose service publishes ("127.0.0.1:8081:8080" → 8080). */
function containerPorts(service: ComposeService): number[] {
  return (service.ports ?? []).map((port) => Number(port.split(':').at(-1)?.split('/')[0]));
}

/** Whether `host:port` (of a URL or a scrape target) is a compose service publishing that port. */
function namesService(services: Record<string, ComposeService>, hostPort: string): boolean {
  const [host, port] = hostPort.split(':');
  return services[host] !== undefined && containerPorts(services[host]).includes(Number(port));
}

describe('Monitoring (Prometheus and Grafana of docker-compose.yml)', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let scraped: Exposition;
  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
    // One lookup, so that the request, engine and _msearch series have samples.
    expect(
      (await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' })).status,
    ).to.equal(200);
    const response = await api.get('/metrics');
    expect(response.status).to.equal(200);
    scraped = readExposition(response.text);
  });
  after(async () => {
    await api.stop();
  });

  it(
    'the chemxref dashboard is valid JSON with uid chemxref, every panel ' +
      'on the Prometheus chosen in its data source menu',
    () => {
      const { uid, panels, templating } = dashboard();
      expect(uid).to.equal('chemxref');
      const menu = templating.list.find((variable) => variable.name === 'datasource');
      expect(menu).to.deep.include({ type: 'datasource', query: 'prometheus' });
      for (const panel of panelsOf(panels)) expect(panel.datasource?.uid, panel.title).to.equal('${datasource}');
      expect(panelsOf(panels).map((panel) => panel.title)).to.include('Last load of each source');
    },
  );

  it('every series a dashboard panel charts is one GET /metrics serves', () => {
    for (const panel of panelsOf(dashboard().panels).filter((candidate) => candidate.type !== 'row')) {
      const series = (panel.targets ?? []).flatMap((target) => seriesOf(target.expr ?? ''));
      expect(series, `${panel.title} charts no chemxref, process or nodejs series`).to.not.be.empty;
      for (const name of series) expect(serves(scraped, name), `${panel.title}: ${name}`).to.be.true;
    }
  });

  it('every label a dashboard panel groups by is on the series it groups', async () => {
    const exercised = await exercisedMetrics();
    for (const panel of panelsOf(dashboard().panels)) {
      for (const { expr = '' } of panel.targets ?? []) {
        const grouping = groupingLabelsOf(expr).filter((label) => !targetLabels.has(label));
        if (grouping.length === 0) continue;
        for (const name of seriesOf(expr)) {
          const labels = scraped.labels.get(name) ?? exercised.labels.get(name);
          expect(labels, `${panel.title}: ${name} has no samples to read labels from`).to.not.be.undefined;
          for (const label of grouping) expect([...labels!], `${panel.title}: ${name} by ${label}`).to.include(label);
        }
      }
    }
  });

  it('Grafana finds its Prometheus, its provisioning and the dashboard where docker-compose.yml puts them', () => {
    const services = compose();
    const mounts = bindMounts(services.grafana);
    expect(services.grafana.profiles).to.deep.equal(['monitoring']);
    const provisioning = mounts.get('/etc/grafana/provisioning');
    expect(provisioning).to.equal(join(root, 'grafana', 'provisioning'));
    const datasources = parse(readFileSync(join(provisioning!, 'datasources', 'prometheus.yml'), 'utf8')) as {
      datasources: { uid: string; url: string }[];
    };
    const [prometheus] = datasources.datasources;
    expect(namesService(services, new URL(prometheus.url).host), prometheus.url).to.be.true;
    const menu = dashboard().templating.list.find((variable) => variable.name === 'datasource');
    expect(menu?.current?.value, 'the data source menu opens on the provisioned Prometheus').to.equal(prometheus.uid);
    const providers = parse(readFileSync(join(provisioning!, 'dashboards', 'chemxref.yml'), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    for (const provider of providers.providers) {
      const dashboards = mounts.get(provider.options.path);
      expect(dashboards, `${provider.options.path} is mounted`).to.be.a('string');
      expect(existsSync(join(dashboards!, 'chemxref.json'))).to.be.true;
    }
  });

  it('Prometheus scrapes GET /metrics of API services docker-compose.yml defines, on their ports', () => {
    const services = compose();
    expect(services.prometheus.profiles).to.deep.equal(['monitoring']);
    expect(bindMounts(services.prometheus).get('/etc/prometheus/prometheus.yml')).to.equal(
      join(root, 'prometheus', 'prometheus.yml'),
    );
    const config = parse(readText('prometheus/prometheus.yml')) as {
      scrape_configs: { job_name: string; metrics_path?: string; static_configs: { targets: string[] }[] }[];
    };
    const job = config.scrape_configs.find((scrape) => scrape.job_name === 'chemxref');
    expect(job?.metrics_path ?? '/metrics').to.equal('/metrics');
    const targets = job!.static_configs.flatMap((group) => group.targets);
    expect(targets).to.include('api:8080');
    for (const target of targets) expect(namesService(services, target), target).to.be.true;
  });
});
