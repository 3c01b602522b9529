import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { Engine, IndexNames } from '../src/engine/client';
import { allSources } from '../src/engine/sources';
import {
  esqlDataViewId,
  fitSavedObjects,
  importBody,
  readSavedObjects,
  sourcePageScript,
  toNdjson,
  type SavedObject,
} from '../src/kibana/setup';
import { fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

const root = join(__dirname, '..');
const shipped = readSavedObjects();
const byId = new Map(shipped.map((object) => [object.id, object]));
const jsonStrings: Record<string, string[]> = {
  'index-pattern': ['fields', 'fieldAttrs', 'sourceFilters', 'fieldFormatMap', 'runtimeFieldMap'],
  visualization: ['visState', 'uiStateJSON'],
  dashboard: ['panelsJSON', 'optionsJSON'],
  search: [],
};
// Kibana 8.19 refuses an object stamped newer than it knows and runs every old migration on one not stamped.
const typeMigrationVersion: Record<string, string> = {
  'index-pattern': '8.0.0',
  visualization: '8.5.0',
  search: '10.5.0',
  dashboard: '10.2.0',
};

function searchSourceOf(object: SavedObject): Record<string, any> {
  return JSON.parse((object.attributes.kibanaSavedObjectMeta as { searchSourceJSON: string }).searchSourceJSON);
}

function dataViewOf(object: SavedObject): SavedObject | undefined {
  const reference = object.references.find((r) => r.name === 'kibanaSavedObjectMeta.searchSourceJSON.index');
  return reference ? byId.get(reference.id) : undefined;
}

/** The fields a KQL query names (`field : value`, `field > 1`, `not field : x`). */
function kqlFields(query: string): string[] {
  return [...query.matchAll(/([A-Za-z_][A-Za-z0-9_.]*)\s*(?::|>=|<=|>|<)/g)].map((match) => match[1]);
}

describe('Kibana saved objects for curators (kibana/chemxref.ndjson)', function () {
  this.timeout(180_000);

  it(
    'parses as Kibana 8 saved objects: one a line, stamped for 8.x, ' + 'JSON-string attributes that parse, unique ids',
    () => {
      expect(shipped.map((o) => o.type).sort()).to.deep.equal([
        'dashboard',
        ...Array(6).fill('index-pattern'),
        ...Array(6).fill('search'),
        ...Array(5).fill('visualization'),
      ]);
      expect(new Set(shipped.map((o) => o.id)).size).to.equal(shipped.length);
      for (const object of shipped) {
        expect(object.coreMigrationVersion, object.id).to.equal('8.8.0');
        expect(object.typeMigrationVersion, object.id).to.equal(typeMigrationVersion[object.type]);
        expect(object.attributes.title, object.id).to.be.a('string').and.not.equal('');
        for (const key of jsonStrings[object.type])
          expect(() => JSON.parse(object.attributes[key] as string), `${object.id} ${key}`).to.not.throw();
        if (object.type !== 'index-pattern') expect(() => searchSourceOf(object), object.id).to.not.throw();
      }
    },
  );

  it('every reference names an object of the file, and every indexRefName and panelRefName a reference', () => {
    for (const object of shipped) {
      for (const reference of object.references) {
        expect(byId.get(reference.id)?.type, `${object.id} → ${reference.id}`).to.equal(reference.type);
      }
      const names = new Set(object.references.map((r) => r.name));
      if (object.type === 'search' || object.type === 'visualization') {
        const source = searchSourceOf(object);
        if (source.indexRefName) expect(names.has(source.indexRefName), object.id).to.equal(true);
        for (const filter of source.filter ?? [])
          expect(names.has(filter.meta.indexRefName), `${object.id} filter`).to.equal(true);
      }
      if (object.type === 'dashboard') {
        for (const panel of JSON.parse(object.attributes.panelsJSON as string)) {
          expect(panel.gridData.i).to.equal(panel.panelIndex);
          expect(panel.gridData.x + panel.gridData.w).to.be.at.most(48);
          expect(names.has(`${panel.panelIndex}:${panel.panelRefName}`), `panel ${panel.panelIndex}`).to.equal(true);
        }
      }
    }
  });

  it(
    'the data views read the aliases and indices chemxref creates, never a ' +
      'release index (a reload never breaks them)',
    () => {
      const names = new IndexNames('chemxref');
      const titles = shipped
        .filter((o) => o.type === 'index-pattern')
        .map((o) => o.attributes.title)
        .sort();
      expect(titles).to.deep.equal(
        [names.compounds, names.meta, names.rejects, names.rejectsOfLastLoad, names.sources, names.assignments].sort(),
      );
    },
  );

  describe('against the real mappings of a loaded chemxref', () => {
    let prefix: string;
    let engine: Engine;
    let fitted: SavedObject[];
    let caps: Map<string, Record<string, { type: string; searchable: boolean; aggregatable: boolean }>>;

    before(async () => {
      prefix = await loadFixture(freshPrefix('kibana'));
      await load(prefix, ['structures', join(fixturesDir, 'rules', 'structure.tsv')]);
      engine = new Engine(testConfig(prefix));
      fitted = fitSavedObjects(shipped, {
        prefix,
        chemxrefUrl: 'https://chemxref.example.org',
        sources: await allSources(engine),
      });
      caps = new Map();
      for (const view of fitted.filter((o) => o.type === 'index-pattern')) {
        const answer = await engine.client.fieldCaps({ index: String(view.attributes.title), fields: '*' });
        expect(answer.indices.length, `${view.attributes.title} matches an index`).to.be.above(0);
        const fields: Record<string, { type: string; searchable: boolean; aggregatable: boolean }> = {};
        for (const [name, types] of Object.entries(answer.fields)) {
          const [type, cap] = Object.entries(types)[0];
          fields[name] = { type, searchable: cap.searchable, aggregatable: cap.aggregatable };
        }
        for (const [name, field] of Object.entries<{ type: string }>(
          JSON.parse(view.attributes.runtimeFieldMap as string),
        )) {
          fields[name] = { type: field.type, searchable: true, aggregatable: true };
        }
        caps.set(view.id, fields);
      }
    });
    after(() => engine.close());

    it("each data view's time field is a date, and each formatted field exists with a type its format fits", () => {
      for (const view of fitted.filter((o) => o.type === 'index-pattern')) {
        const fields = caps.get(view.id)!;
        if (view.attributes.timeFieldName)
          expect(fields[view.attributes.timeFieldName as string]?.type, view.id).to.equal('date');
        for (const [field, format] of Object.entries<{ id: string }>(
          JSON.parse(view.attributes.fieldFormatMap as string),
        )) {
          expect(fields[field], `${view.id}: ${field}`).to.not.equal(undefined);
          if (format.id === 'relative_date') expect(fields[field].type, `${view.id}: ${field}`).to.equal('date');
          if (format.id === 'static_lookup') expect(fields[field].type, `${view.id}: ${field}`).to.equal('integer');
        }
        for (const [name, field] of Object.entries<{ script: { source: string } }>(
          JSON.parse(view.attributes.runtimeFieldMap as string),
        )) {
          for (const [, used] of field.script.source.matchAll(/doc\['([^']+)'\]/g))
            expect(fields[used]?.aggregatable, `${view.id}: ${name} reads ${used}`).to.equal(true);
        }
      }
    });

    it(
      'every column, sort and query field of a saved search exists in its ' +
        'data view; sorted fields are aggregatable',
      () => {
        for (const search of fitted.filter((o) => o.type === 'search' && !o.attributes.isTextBasedQuery)) {
          const fields = caps.get(dataViewOf(search)!.id)!;
          for (const column of search.attributes.columns as string[])
            expect(fields[column], `${search.id}: column ${column}`).to.not.equal(undefined);
          for (const [field] of search.attributes.sort as string[][])
            expect(fields[field]?.aggregatable, `${search.id}: sort ${field}`).to.equal(true);
          const source = searchSourceOf(search);
          for (const field of kqlFields(source.query.query))
            expect(fields[field]?.searchable, `${search.id}: query ${field}`).to.equal(true);
          for (const filter of source.filter)
            expect(fields[filter.meta.key]?.searchable, `${search.id}: filter ${filter.meta.key}`).to.equal(true);
        }
      },
    );

    it(
      'the ES|QL search reads the assignments alias, its fields aggregatable ' +
        'there, with the data view id Kibana derives',
      () => {
        const search = fitted.find((o) => o.id === 'chemxref-held-by-one-source')!;
        const source = searchSourceOf(search);
        expect(source.query.esql.split('\n')[0]).to.equal(`FROM ${prefix}-assignments`);
        expect(source.index).to.include({
          title: `${prefix}-assignments`,
          type: 'esql',
          id: esqlDataViewId(`${prefix}-assignments`),
        });
        const fields = caps.get('chemxref-assignments')!;
        for (const field of ['assignment', 'sourceId', 'uci'])
          expect(fields[field]?.aggregatable, field).to.equal(true);
      },
    );

    it(
      'every field a visualization aggregates on, or queries, is ' +
        'aggregatable in its data view with a type the aggregation takes',
      () => {
        for (const vis of fitted.filter((o) => o.type === 'visualization')) {
          const fields = caps.get(dataViewOf(vis)!.id)!;
          const state = JSON.parse(vis.attributes.visState as string);
          for (const agg of state.aggs) {
            for (const key of ['field', 'sortField']) {
              const name = agg.params[key];
              if (!name) continue;
              expect(fields[name]?.aggregatable, `${vis.id}: ${agg.type} on ${name}`).to.equal(true);
              if (['sum'].includes(agg.type))
                expect(fields[name].type, `${vis.id}: sum of ${name}`).to.be.oneOf([
                  'long',
                  'integer',
                  'float',
                  'double',
                ]);
              if (['date_histogram'].includes(agg.type) || (agg.type === 'max' && ['started', 'age'].includes(name)))
                expect(fields[name].type).to.equal('date');
            }
          }
          for (const field of kqlFields(searchSourceOf(vis).query.query))
            expect(fields[field]?.searchable, `${vis.id}: query ${field}`).to.equal(true);
        }
      },
    );

    it(
      'fits the objects to the installation: its prefix, the names of its ' +
        "sources, links to its chemxref and to each source's pages",
      async () => {
        const assignments = fitted.find((o) => o.id === 'chemxref-assignments')!;
        expect(assignments.attributes.title).to.equal(`${prefix}-assignments`);
        const formats = JSON.parse(assignments.attributes.fieldFormatMap as string);
        expect(formats.sourceId.params.lookupEntries).to.deep.include({ key: '1', value: 'ChEMBL (1)' });
        expect(formats.sourceId.params.lookupEntries).to.have.length((await allSources(engine)).length);
        expect(formats.standardInchiKey.params.urlTemplate).to.equal('https://chemxref.example.org/search?q={{value}}');
        expect(formats.uci.params.urlTemplate).to.equal('https://chemxref.example.org/compound/{{value}}');
        const runtime = JSON.parse(assignments.attributes.runtimeFieldMap as string);
        expect(runtime.chemxrefPage.script.source).to.contain(
          "emit('https://chemxref.example.org/search?q=' + doc['sourceId'].value + '%3A' + ",
        );
        expect(runtime.sourcePage.script.source).to.contain(
          "if (id == 1) { emit('https://www.ebi.ac.uk/chembldb/compound/inspect/' + doc['compoundId'].value",
        );
        const loads = fitted.find((o) => o.id === 'chemxref-loads')!;
        expect(JSON.parse(loads.attributes.fieldFormatMap as string).sourceIds.params.lookupEntries).to.deep.equal(
          formats.sourceId.params.lookupEntries,
        );
      },
    );
  });

  it('a source name or URL with a quote or a backslash stays one Painless string', () => {
    const script = sourcePageScript([
      { sourceID: 7, baseIdUrl: "https://x.example/it's\\", baseIdUrlAvailable: true } as never,
    ]);
    expect(script).to.contain("emit('https://x.example/it\\'s\\\\' + ");
  });

  it(
    "docker compose runs kibana:setup from the API's image once each " +
      'Kibana is healthy, pointed at that Kibana and engine',
    () => {
      type Service = {
        command?: string[];
        depends_on?: Record<string, { condition: string }>;
        environment?: string[];
        healthcheck?: { test: string[] };
        ports?: string[];
        profiles?: string[];
        build?: string;
      };
      const services = (
        parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
          services: Record<string, Service>;
        }
      ).services;
      for (const [setup, kibana, api] of [
        ['kibana-setup', 'kibana', 'api'],
        ['kibana-setup-cluster', 'kibana-cluster', 'api-cluster'],
      ]) {
        const service = services[setup];
        expect(service.build, setup).to.equal('.');
        expect(service.command).to.deep.equal(['node', 'dist/src/kibana/cli.js']);
        expect(service.depends_on).to.deep.equal({ [kibana]: { condition: 'service_healthy' } });
        expect(services[kibana].healthcheck?.test.join(' '), kibana).to.contain('/api/status');
        const env = Object.fromEntries(service.environment!.map((entry) => entry.split(/=(.*)/s).slice(0, 2)));
        expect(env.KIBANA_URL).to.equal(`http://${kibana}:5601`);
        expect(env.ES_URL).to.equal(
          Object.fromEntries(services[api].environment!.map((entry) => entry.split(/=(.*)/s).slice(0, 2))).ES_URL,
        );
        const published = services[api].ports![0].split(':');
        expect(env.CHEMXREF_URL, 'links open in the browser: the API as published on the host').to.equal(
          `http://${published[0]}:${published[1]}`,
        );
        expect(service.profiles, setup).to.deep.equal(services[api].profiles);
      }
    },
  );

  describe('npm run kibana:setup, against a recording stand-in for Kibana', () => {
    interface Recorded {
      method: string;
      url: string;
      headers: IncomingMessage['headers'];
      body: string;
    }
    let server: Server;
    let recorded: Recorded[];
    let statusAnswers: { status: number; body: unknown }[];
    let importAnswer: unknown;
    let prefix: string;
    let kibanaUrl: string;

    before(async () => {
      prefix = await loadFixture(freshPrefix('kibana-setup'));
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          recorded.push({
            method: request.method!,
            url: request.url!,
            headers: request.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
          const answer = request.url!.endsWith('/api/status')
            ? (statusAnswers.shift() ?? { status: 200, body: { status: { overall: { level: 'available' } } } })
            : { status: 200, body: importAnswer };
          response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
        });
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      kibanaUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    beforeEach(() => {
      recorded = [];
    });
    after(() => new Promise<void>((done) => server.close(() => done())));

    function setup(env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((done) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'kibana', 'cli.ts')], {
          cwd: root,
          env: {
            ...process.env,
            ES_INDEX_PREFIX: prefix,
            KIBANA_URL: kibanaUrl,
            CHEMXREF_URL: 'https://chemxref.example.org',
            ...env,
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => {
          stdout += chunk;
        });
        child.stderr.on('data', (chunk) => {
          stderr += chunk;
        });
        child.on('exit', (code) => done({ code: code ?? 1, stdout, stderr }));
      });
    }

    it(
      'waits for Kibana to be ready, then imports the fitted objects with ' +
        'overwrite in one multipart request, and prints what it installed',
      async () => {
        statusAnswers = [
          { status: 503, body: { status: { overall: { level: 'unavailable' } } } },
          {
            status: 200,
            body: { status: { overall: { level: 'degraded' }, core: { savedObjects: { level: 'available' } } } },
          },
        ];
        importAnswer = {
          success: true,
          successCount: shipped.length,
          successResults: shipped.map((o) => ({ type: o.type, id: o.id, meta: { title: o.attributes.title } })),
        };
        const result = await setup();
        expect(result.code, result.stderr).to.equal(0);
        expect(recorded.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
          'GET /api/status',
          'GET /api/status',
          'POST /api/saved_objects/_import?overwrite=true',
        ]);
        const post = recorded[2];
        expect(post.headers['kbn-xsrf']).to.equal('chemxref');
        const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(String(post.headers['content-type']))![1];
        const engine = new Engine(testConfig(prefix));
        const sources = await allSources(engine).finally(() => engine.close());
        const expected = fitSavedObjects(shipped, { prefix, chemxrefUrl: 'https://chemxref.example.org', sources });
        expect(post.body).to.equal(importBody(toNdjson(expected), boundary));
        expect(post.body).to.contain('Content-Disposition: form-data; name="file"; filename="chemxref.ndjson"');
        expect(result.stderr).to.contain(`waiting for Kibana at ${kibanaUrl} (HTTP 503, status unavailable)`);
        expect(result.stdout).to.contain('installed dashboard "Sources overview"');
        expect(result.stdout).to.contain(
          `18 saved objects in ${kibanaUrl}, for the indices ${prefix}-*, 7 ` +
            `source names, links to https://chemxref.example.org`,
        );
      },
    );

    it('installs into a Kibana space, with basic authentication', async () => {
      statusAnswers = [];
      const result = await setup({ KIBANA_SPACE: 'curators', KIBANA_USERNAME: 'elastic', KIBANA_PASSWORD: 'secret' });
      expect(result.code, result.stderr).to.equal(0);
      expect(recorded.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
        'GET /s/curators/api/status',
        'POST /s/curators/api/saved_objects/_import?overwrite=true',
      ]);
      expect(recorded[1].headers.authorization).to.equal(`Basic ${Buffer.from('elastic:secret').toString('base64')}`);
    });

    it('fails naming each object Kibana refused', async () => {
      statusAnswers = [];
      importAnswer = {
        success: false,
        successCount: 17,
        errors: [
          {
            id: 'chemxref-held-by-one-source',
            type: 'search',
            meta: { title: 'Structures held by one source only' },
            error: { type: 'unknown', message: 'ES|QL is not enabled' },
          },
        ],
      };
      const result = await setup();
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain(
        'kibana:setup failed: Kibana imported 17 of 18 saved objects; refused: ' +
          'search "Structures held by one source only": ES|QL is not enabled',
      );
    });

    it('gives up with the last answer it heard when Kibana is not ready in KIBANA_WAIT', async () => {
      statusAnswers = Array(20).fill({ status: 503, body: { status: { overall: { level: 'unavailable' } } } });
      const result = await setup({ KIBANA_WAIT: '3s' });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain(
        `kibana:setup failed: Kibana at ${kibanaUrl} is not ready after 3 s (HTTP 503, status unavailable)`,
      );
      expect(recorded.every((r) => r.url === '/api/status')).to.equal(true);
    });
  });
});
