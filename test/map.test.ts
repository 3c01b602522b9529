import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parseMapArguments, UsageError } from '../src/map/cli';
import { fixturePrefix } from './support/fixture';
import { startApi, type RunningApi } from './support/api';
import { testConfig } from './support/fixture';

const run = promisify(execFile);
const cli = join(__dirname, '..', 'src', 'map', 'cli.ts');
const tsx = join(__dirname, '..', 'node_modules', '.bin', 'tsx');

describe('npm run map', function () {
  this.timeout(300_000);
  let folder: string;
  let env: NodeJS.ProcessEnv;
  let api: RunningApi;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'map-'));
    const prefix = await fixturePrefix();
    env = { ...process.env, ES_INDEX_PREFIX: prefix };
    api = await startApi(testConfig(prefix));
  });
  after(async () => {
    await api?.stop();
  });

  it('maps a list of ChEMBL ids to NCI/DTP as TSV, a row per record, saying which found none', async () => {
    const ids = join(folder, 'chembl.txt');
    writeFileSync(ids, 'CHEMBL112\nCHEMBL0\n\nCHEMBL1511957\n');
    const { stderr } = await run(
      tsx,
      [
        cli,
        ids,
        '--type',
        'sourceID',
        '--source',
        '1',
        '--to',
        '101',
        '--out',
        join(folder, 'out.tsv'),
        '--no-progress',
      ],
      { env },
    );
    const summary = JSON.parse(stderr.trim().split('\n').pop()!);
    expect(summary).to.include({ status: 'done', queries: 3, found: 2, notFound: 1, errors: 0 });
    const [header, ...rows] = readFileSync(join(folder, 'out.tsv'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'));
    expect(header).to.deep.equal([
      'query',
      'result',
      'uci',
      'standardInchiKey',
      'sourceId',
      'source',
      'compoundId',
      'relation',
    ]);
    // What the API answers, kept to NCI/DTP (101).
    const expected: string[][] = [];
    for (const id of ['CHEMBL112', 'CHEMBL0', 'CHEMBL1511957']) {
      const { body } = await api.post('/api/v1/compounds', { type: 'sourceID', compound: id, sourceID: 1 });
      const records = (body.compounds ?? []).flatMap((compound: any) =>
        compound.sources
          .filter((source: any) => source.id === 101)
          .map((source: any) => [
            id,
            'found',
            String(compound.uci),
            compound.standardInchiKey,
            '101',
            source.shortName,
            source.compoundId,
            '',
          ]),
      );
      expected.push(
        ...(records.length > 0
          ? records
          : [[id, body.response === 'Success' ? 'none in source 101' : 'not found', '', '', '', '', '', '']]),
      );
    }
    expect(rows).to.deep.equal(expected);
    expect(rows[0]).to.deep.equal([
      'CHEMBL112',
      'found',
      rows[0][2],
      'RZVAJINKPMORJF-UHFFFAOYSA-N',
      '101',
      'nci_dtp',
      '3991',
      '',
    ]);
  });

  it('writes NDJSON lines exactly as the batch endpoint answers them, from NDJSON queries', async () => {
    const queries = join(folder, 'queries.ndjson');
    const lines = [
      { id: 'p', type: 'smiles', compound: 'CC(=O)Nc1ccc(O)cc1' },
      { id: 'c', op: 'connectivity', type: 'inchikey', compound: 'AGPKZVBTJJNPAG-WHFBIAKZSA-N' },
      { id: 'bad', type: 'inchikey', compound: 'RZVAJINKPMORJF' },
    ];
    writeFileSync(queries, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const { stdout } = await run(tsx, [cli, queries, '--format', 'ndjson', '--no-progress'], { env });
    const response = await fetch(`${api.url}/api/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: readFileSync(queries),
    });
    expect(stdout).to.equal(await response.text());
  });

  it('--similarity and --substructure write a row per record of each hit, with its Tanimoto or "substructure"', async () => {
    const keys = join(folder, 'keys.txt');
    writeFileSync(keys, 'RZVAJINKPMORJF-UHFFFAOYSA-N\n');
    const similar = join(folder, 'similar.tsv');
    await run(tsx, [cli, keys, '--type', 'inchikey', '--similarity', '--threshold', '0.5', '--out', similar], { env });
    const rows = readFileSync(similar, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t'));
    expect(rows.find((row) => row[6] === 'CHEMBL112')).to.deep.equal([
      'RZVAJINKPMORJF-UHFFFAOYSA-N',
      'found',
      '614',
      'RZVAJINKPMORJF-UHFFFAOYSA-N',
      '1',
      'chembl',
      'CHEMBL112',
      'tanimoto 1',
    ]);
    const fragments = join(folder, 'fragments.txt');
    writeFileSync(fragments, 'c1ccc2ncccc2c1\n');
    const { stdout } = await run(tsx, [cli, fragments, '--type', 'smiles', '--substructure', '--limit', '2'], { env });
    const hits = stdout.trim().split('\n').slice(1);
    expect(hits.length).to.be.greaterThan(0);
    expect(hits.every((line) => line.endsWith('\tsubstructure'))).to.equal(true);
  });

  it('maps a list of names, as typed, to the names BZR gives them; an unknown name is not found', async () => {
    const names = join(folder, 'names.txt');
    writeFileSync(names, 'diazepam\n  NORDAZEPAM \nno such drug\n');
    const { stdout } = await run(tsx, [cli, names, '--type', 'name', '--to', '104', '--no-progress'], { env });
    const rows = stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t'))
      .map(([query, result, , , , , compoundId]) => [query, result, compoundId ?? '']);
    expect(rows).to.deep.equal([
      ['diazepam', 'found', 'Diazepam'],
      ['NORDAZEPAM', 'found', 'Nordazepam'],
      ['no such drug', 'not found', ''],
    ]);
  });

  it('says what is wrong with its arguments', async () => {
    const ids = join(folder, 'ids.txt');
    writeFileSync(ids, 'CHEMBL112\n');
    const refused = (argv: string[]): string => {
      try {
        parseMapArguments(argv, 8);
      } catch (error) {
        expect(error).to.be.instanceOf(UsageError);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refused([ids])).to.match(/^--type is missing/);
    expect(refused([ids, '--type', 'sourceID'])).to.equal(
      '--type sourceID needs --source N: the source the ids belong to',
    );
    expect(refused([ids, '--type', 'molfile'])).to.match(/^--type must be one of/);
    expect(refused([join(folder, 'nothing.txt'), '--type', 'uci'])).to.match(/^no file/);
    expect(refused([ids, '--type', 'inchikey', '--search-components'])).to.equal(
      '--search-components goes with --connectivity',
    );
    expect(refused([ids, '--type', 'inchikey', '--to', 'x'])).to.match(/^--to needs a positive whole number/);
    expect(refused([ids, '--type', 'inchikey', '--concurrency', '0'])).to.equal(
      '--concurrency needs a positive whole number, got "0"',
    );
    const format = refused([ids, '--type', 'inchikey', '--format', 'csv']);
    expect(format).to.equal('--format must be one of tsv, ndjson, got "csv"');
    expect(refused([ids, '--type', 'inchikey', '--out'])).to.equal('--out needs a value');
    expect(refused([ids, '--type', 'inchikey', '--connectivty'])).to.equal('unknown option --connectivty');
    expect(refused([ids, '--type', 'smiles', '--similarity', '--substructure'])).to.equal(
      '--similarity and --substructure cannot go together: one search a line',
    );
    expect(refused([ids, '--type', 'inchikey', '--threshold', '0.5'])).to.equal('--threshold goes with --similarity');
    expect(refused([ids, '--type', 'name', '--connectivity'])).to.equal(
      '--type name goes with a compounds lookup: a name cannot be given to --connectivity',
    );
    expect(refused([ids, '--type', 'inchikey', '--similarity', '--threshold', '0.2'])).to.equal(
      '--threshold "0.2" must be a number from 0.3 to 1',
    );
    expect(parseMapArguments([ids, '--type', 'inchikey', '--out', 'x.ndjson', '--no-progress'], 8)).to.deep.equal({
      out: 'x.ndjson',
      options: {
        file: ids,
        type: 'inchikey',
        sourceId: undefined,
        to: undefined,
        op: 'compounds',
        searchComponents: false,
        format: 'ndjson',
        concurrency: 8,
        progress: false,
      },
    });
    const failure = await run(tsx, [cli, ids], { env }).then(
      () => null,
      (error) => error,
    );
    expect(failure.code).to.equal(2);
    expect(failure.stderr).to.match(/--type is missing[\s\S]*usage: npm run map/);
  });
});
