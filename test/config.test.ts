import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError, readConfig } from '../src/config';
import { newestJdk, startEngine } from '../scripts/engine';

describe('configuration', () => {
  it('has a documented default for every setting', () => {
    const config = readConfig({});
    expect(config).to.deep.include({
      ES_URL: 'http://127.0.0.1:9200',
      ES_INDEX_PREFIX: 'chemxref',
      ES_HEAP: '1g',
      PORT: 8080,
      MAX_INCHI_LENGTH: 4000,
      COMPONENT_FREQUENCY_CAP: 200,
      CONNECTIVITY_MAX_ENTRIES: 10000,
      SIMILARITY_CONCURRENCY: 2,
      BODY_LIMIT: 16 * 1024,
    });
  });

  it('fails fast on a bad value, naming the variable', () => {
    const cases: Record<string, string>[] = [
      { MAX_INCHI_LENGTH: 'many' },
      { PORT: '70000' },
      { ES_URL: 'elastic:9200' },
      { ES_INDEX_PREFIX: 'Upper Case' },
      { ES_HEAP: '1 gigabyte' },
      { BODY_LIMIT: 'big' },
      { COMPONENT_FREQUENCY_CAP: '0' },
      { SIMILARITY_CONCURRENCY: '0' },
    ];
    for (const env of cases) {
      const [name] = Object.keys(env);
      expect(() => readConfig(env), name).to.throw(ConfigError, name);
    }
  });
});

describe('npm run es:start', () => {
  it('refuses a port held by something that is not Elasticsearch, with a clear message', async () => {
    const squatter = createServer((_req, res) => {
      res.end('not a search engine');
    });
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

  it("runs the engine on the newest JDK 17+ it finds, read from each JDK's release file", () => {
    const folder = mkdtempSync(join(tmpdir(), 'chemxref-jvm-'));
    try {
      const jdk = (name: string, release: string | undefined): void => {
        mkdirSync(join(folder, name, 'bin'), { recursive: true });
        writeFileSync(join(folder, name, 'bin', 'java'), '');
        if (release !== undefined) writeFileSync(join(folder, name, 'release'), release);
      };
      jdk('java-1.8.0-openjdk-amd64', 'JAVA_VERSION="1.8.0_412"\n');
      jdk('java-17-openjdk-amd64', 'IMPLEMENTOR="Debian"\nJAVA_VERSION="17.0.15"\n');
      jdk('temurin-25-jdk-amd64', 'JAVA_VERSION="25.0.3"\n');
      jdk('broken', undefined);
      expect(newestJdk(folder)).to.equal(join(folder, 'temurin-25-jdk-amd64'));
      rmSync(join(folder, 'temurin-25-jdk-amd64'), { recursive: true });
      expect(newestJdk(folder)).to.equal(join(folder, 'java-17-openjdk-amd64'));
      rmSync(join(folder, 'java-17-openjdk-amd64'), { recursive: true });
      expect(newestJdk(folder), 'Java 8 is too old for Elasticsearch 8').to.equal(undefined);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
