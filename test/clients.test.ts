/**
 * Issue 23: existing UniChem clients work against chemxref by changing only their base URL. Each
 * Python script of examples/ points one client at the API (CHEMXREF_URL), looks up paracetamol
 * (ChEMBL CHEMBL112, NCI/DTP 3991, in the fixture and in the demo data) and exits 0 only when every
 * expected answer came back. The scripts run with the Python of CHEMXREF_CLIENTS_PYTHON (default
 * python3); a script whose client that Python cannot import is skipped, saying so in its title.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

const execFileAsync = promisify(execFile);
const python = process.env.CHEMXREF_CLIENTS_PYTHON ?? 'python3';
const examplesDir = join(__dirname, '..', 'examples');

const clients = [
  { name: 'bioservices 1.16.0 (UniChem)', script: 'bioservices_unichem.py', modules: ['bioservices'] },
  {
    name: 'chembl_webresource_client 0.10.9 (unichem_client)',
    script: 'chembl_client_unichem.py',
    modules: ['chembl_webresource_client.unichem'],
  },
  { name: 'plain requests', script: 'requests_unichem.py', modules: ['requests'] },
];

/** Whether `python` can import every one of `modules`. */
async function canImport(modules: string[]): Promise<boolean> {
  try {
    await execFileAsync(python, ['-c', `import ${modules.join(', ')}`], { timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** Runs an example against `baseUrl`; its exit code and what it printed. */
async function runExample(
  script: string,
  baseUrl: string,
): Promise<{ code: number | string | undefined; output: string }> {
  const options = { env: { ...process.env, CHEMXREF_URL: baseUrl, PYTHONWARNINGS: 'ignore' }, timeout: 120_000 };
  try {
    const { stdout, stderr } = await execFileAsync(python, [join(examplesDir, script)], options);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number | string; signal?: string; stdout?: string; stderr?: string };
    return { code: failed.code ?? failed.signal, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('UniChem clients against chemxref (issue 23)', function () {
  this.timeout(600_000);
  let api: RunningApi | undefined;
  const importable = new Map<string, boolean>();

  before(async () => {
    for (const client of clients) importable.set(client.script, await canImport(client.modules));
    if ([...importable.values()].some(Boolean)) api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => {
    await api?.stop();
  });

  for (const client of clients) {
    for (const trailingSlash of [false, true]) {
      const title = `${client.name} finds paracetamol's ids, sources and related structures${trailingSlash ? ', with a base URL ending in a slash' : ''}`;
      it(title, async function () {
        if (!importable.get(client.script) || !api) {
          this.test!.title =
            `${title} (skipped: ${python} cannot import ` +
            `${client.modules.join(', ')}; set CHEMXREF_CLIENTS_PYTHON to a Python ` +
            `that can)`;
          this.skip();
        }
        const { code, output } = await runExample(client.script, api!.url + (trailingSlash ? '/' : ''));
        const failures = output
          .split('\n')
          .filter((line) => !line.startsWith('ok '))
          .join('\n');
        expect(code, `examples/${client.script} failed:\n${failures}`).to.equal(0);
      });
    }
  }
});
