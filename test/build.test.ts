import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { fixtureDump, fixturePrefix, fixturesDir, freshPrefix, testConfig } from './support/fixture';
import { freePort } from './support/checking-clients';

const root = join(__dirname, '..');

/** Every .js file under `dir`. */
function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(c?js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('npm run build and the image it makes', function () {
  this.timeout(300_000);

  before(() => {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
    expect(build.status, `${build.stdout}\n${build.stderr}`).to.equal(0);
  });

  it(
    'emits dist/ with the server, the loader, export and kibana:setup ' +
      'CLIs, the OpenAPI document, the mappings, the workers and the Kibana objects',
    () => {
      for (const path of [
        'src/server.js',
        'loaders/cli.js',
        'src/export/cli.js',
        'src/kibana/cli.js',
        'kibana/chemxref.ndjson',
        'src/web/static/chemxref.css',
        'src/api/openapi.yaml',
        'mappings/assignments.json',
        'mappings/rejects.json',
        'src/toolkits/depict-worker.cjs',
        'src/toolkits/rdkit-worker.cjs',
        'loaders/structure-reader.cjs',
        'loaders/structure-reader.js',
      ]) {
        expect(existsSync(join(root, 'dist', path)), `dist/${path}`).to.equal(true);
      }
      // No TypeScript tool at run time: nothing built requires tsx but the structure reader's
      // fallback for running from the sources.
      const usingTsx = scripts(join(root, 'dist')).filter((file) =>
        /require\(["']tsx/.test(readFileSync(file, 'utf8')),
      );
      expect(usingTsx.map((file) => file.slice(root.length + 1))).to.deep.equal(['dist/loaders/structure-reader.cjs']);
    },
  );

  it(
    'the Dockerfile copies paths that exist and runs the built server, as ' +
      'the unprivileged user, with a health check on /ready',
    () => {
      const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
      const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1].split(/\s+/));
      expect(copied).to.include.members(['package.json', 'package-lock.json', 'src', 'loaders', 'mappings']);
      for (const path of copied) expect(existsSync(join(root, path)), `COPY ${path}`).to.equal(true);
      expect(dockerfile).to.match(/^COPY --from=build \/app\/dist \.\/dist$/m);
      const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
      expect(cmd[0]).to.equal('node');
      expect(existsSync(join(root, cmd[1])), cmd[1]).to.equal(true);
      expect(dockerfile).to.match(/^USER node$/m);
      expect(dockerfile).to.match(/^HEALTHCHECK .*\n?.*\/ready/m);
      expect(dockerfile).to.match(/npm ci --omit=dev/);
    },
  );

  it(
    '`node dist/src/server.js` serves lookups and is ready, and `node ' +
      'dist/loaders/cli.js` loads a dump and a SMILES release, with their fingerprints, without tsx',
    async () => {
      const prefix = await fixturePrefix();
      const config = testConfig(prefix);
      const port = await freePort();
      const env = {
        ...process.env,
        ES_URL: config.ES_URL,
        ES_INDEX_PREFIX: prefix,
        PORT: String(port),
        LOG_LEVEL: 'silent',
        NODE_OPTIONS: '',
      };
      const server = spawn(process.execPath, ['dist/src/server.js'], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      server.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      try {
        const since = Date.now();
        let ready = 0;
        while (ready !== 200) {
          if (Date.now() - since > 30_000 || server.exitCode !== null)
            throw new Error(`the built server did not become ready:\n${output}`);
          ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
            (response) => response.status,
            () => 0,
          );
          if (ready !== 200) await sleep(200);
        }
        const lookup = await fetch(`http://127.0.0.1:${port}/api/v1/compounds`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
        });
        expect(lookup.status).to.equal(200);
        expect(
          ((await lookup.json()) as { compounds: { standardInchiKey: string }[] }).compounds[0].standardInchiKey,
        ).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
        expect((await fetch(`http://127.0.0.1:${port}/api/docs/`)).status).to.equal(200);
      } finally {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
      // The built loader, its workers included (the structure reader; RDKit for a SMILES release).
      const built = { ...env, ES_INDEX_PREFIX: freshPrefix('built') };
      for (const args of [
        ['dump', fixtureDump],
        ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.smiles.tsv')],
      ]) {
        const load = spawnSync(
          process.execPath,
          [
            'dist/loaders/cli.js',
            ...args,
            '--no-progress',
            '--rejects',
            join(tmpdir(), `chemxref-built-${Date.now()}.tsv`),
          ],
          { cwd: root, env: built, encoding: 'utf8' },
        );
        expect(load.status, load.stderr).to.equal(0);
        const summary = JSON.parse(load.stdout.trim());
        expect(summary).to.include({ status: 'done', rowsRejected: 0 });
        // The fingerprints of the structures it added, by the built molecule workers.
        expect(summary.fingerprints, args[0]).to.include({ status: 'done', rowsRejected: 0 });
      }
    },
  );
});
