import { createServer } from 'node:http';
import { expect } from 'chai';
import { ConfigError, readConfig } from '../src/config';
import { startEngine } from '../scripts/engine';

describe('configuration', () => {
  it('has a documented default for every setting', () => {
    const config = readConfig({});
    expect(config).to.deep.include({
      ES_URL: 'http://127.0.0.1:9200', ES_INDEX_PREFIX: 'chemxref', ES_HEAP: '1g', PORT: 8080,
      MAX_INCHI_LENGTH: 4000, COMPONENT_FREQUENCY_CAP: 200, CONNECTIVITY_MAX_ENTRIES: 10000, BODY_LIMIT: 16 * 1024,
    });
  });

  it('fails fast on a bad value, naming the variable', () => {
    const cases: Record<string, string>[] = [
      { MAX_INCHI_LENGTH: 'many' }, { PORT: '70000' }, { ES_URL: 'elastic:9200' }, { ES_INDEX_PREFIX: 'Upper Case' },
      { ES_HEAP: '1 gigabyte' }, { BODY_LIMIT: 'big' }, { COMPONENT_FREQUENCY_CAP: '0' },
    ];
    for (const env of cases) {
      const [name] = Object.keys(env);
      expect(() => readConfig(env), name).to.throw(ConfigError, name);
    }
  });
});

describe('npm run es:start', () => {
  it('refuses a port held by something that is not Elasticsearch, with a clear message', async () => {
    const squatter = createServer((_req, res) => { res.end('not a search engine'); });
    await new Promise<void>((done) => squatter.listen(0, '127.0.0.1', done));
    const { port } = squatter.address() as { port: number };
    try {
      let failure: Error | undefined;
      try {
        await startEngine(`http://127.0.0.1:${port}`);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(new RegExp(`port ${port} .* is taken by something that is not Elasticsearch`));
    } finally {
      squatter.close();
    }
  });

  it('reuses the node that already answers instead of starting a second one', async () => {
    const result = await startEngine(readConfig().ES_URL);
    expect(result.reused).to.equal(true);
  });
});
