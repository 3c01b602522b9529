import { expect } from 'chai';
import { readConfig } from '../src/config';
import { Engine, mappingOf } from '../src/engine/client';
import { EngineUnavailable, translateEngineError } from '../src/engine/errors';
import { ensureBaseIndices } from '../src/engine/schema';
import { putSource } from '../src/engine/sources';
import { SourceCatalog } from '../src/domain/sources';
import type { SourceDocument } from '../src/domain/types';
import { deleteIndicesByPrefix } from './support/engine';

describe('the real Elasticsearch node', () => {
  const engine = new Engine(readConfig());
  const index = `${engine.names.prefix}-smoke`;

  after(async () => {
    await engine.client.indices.delete({ index }, { ignore: [404] });
    await engine.close();
  });

  it('finds paracetamol by its InChIKey with a term query on a keyword field', async () => {
    const health = await engine.client.cluster.health();
    expect(health.cluster_name).to.be.a('string');
    await engine.client.indices.create({ index, ...mappingOf('xrefs') });
    await engine.client.bulk({
      refresh: true,
      operations: [
        { index: { _index: index } },
        { sourceId: 1, compoundId: 'CHEMBL112', uci: 1, assignment: 1, standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N', connectivityBlock: 'RZVAJINKPMORJF' },
        { index: { _index: index } },
        { sourceId: 101, compoundId: '3991', uci: 1, assignment: 1, standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N', connectivityBlock: 'RZVAJINKPMORJF' },
        { index: { _index: index } },
        { sourceId: 1, compoundId: 'CHEMBL25', uci: 2, assignment: 1, standardInchiKey: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N', connectivityBlock: 'BSYNRYMUTXBXSQ' },
      ],
    });
    const found = await engine.client.search<{ compoundId: string }>({
      index, query: { term: { standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N' } }, sort: [{ compoundId: 'asc' }],
    });
    expect(found.hits.hits.map((hit) => hit._source?.compoundId)).to.deep.equal(['3991', 'CHEMBL112']);
    await engine.client.indices.delete({ index });
    expect(await engine.client.indices.exists({ index })).to.equal(false);
  });

  describe('searches sent together in one _msearch (src/engine/batch.ts)', () => {
    const xrefs = `${engine.names.prefix}-batch`;
    const paracetamol = 'RZVAJINKPMORJF-UHFFFAOYSA-N';
    const aspirin = 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N';

    before(async () => {
      await engine.client.indices.create({ index: xrefs, ...mappingOf('xrefs') });
      await engine.client.bulk({
        refresh: true,
        operations: [
          { index: { _index: xrefs } }, { sourceId: 1, compoundId: 'CHEMBL112', uci: 1, assignment: 1, standardInchiKey: paracetamol, connectivityBlock: 'RZVAJINKPMORJF' },
          { index: { _index: xrefs } }, { sourceId: 101, compoundId: '3991', uci: 1, assignment: 1, standardInchiKey: paracetamol, connectivityBlock: 'RZVAJINKPMORJF' },
          { index: { _index: xrefs } }, { sourceId: 1, compoundId: 'CHEMBL25', uci: 2, assignment: 1, standardInchiKey: aspirin, connectivityBlock: 'BSYNRYMUTXBXSQ' },
        ],
      });
    });
    after(async () => {
      await engine.client.indices.delete({ index: xrefs }, { ignore: [404] });
    });

    const idsOf = (key: string) => engine.search<{ compoundId: string }>({ index: xrefs, query: { term: { standardInchiKey: key } }, sort: [{ compoundId: 'asc' }], size: 10 })
      .then((found) => found.hits.hits.map((hit) => hit._source!.compoundId));

    it('answers each of many searches sent at once with its own hits', async () => {
      const keys = Array.from({ length: 150 }, (_, i) => (i % 3 === 2 ? 'AAAAAAAAAAAAAA-UHFFFAOYSA-N' : i % 3 === 1 ? aspirin : paracetamol));
      const answers = await Promise.all(keys.map(idsOf));
      answers.forEach((ids, i) => expect(ids).to.deep.equal(keys[i] === paracetamol ? ['3991', 'CHEMBL112'] : keys[i] === aspirin ? ['CHEMBL25'] : []));
    });

    it('fails only the search whose index is missing, with the error a lone search would give', async () => {
      const [good, missing] = await Promise.allSettled([idsOf(aspirin), engine.search({ index: `${engine.names.prefix}-no-such-index`, query: { match_all: {} } })]);
      expect(good).to.deep.equal({ status: 'fulfilled', value: ['CHEMBL25'] });
      expect(missing.status).to.equal('rejected');
      const translated = translateEngineError((missing as PromiseRejectedResult).reason);
      expect(translated).to.be.instanceOf(EngineUnavailable);
      expect((translated as Error).message).to.match(/indices are missing/);
    });

    it('refuses a URL-only search parameter instead of dropping it', async () => {
      const refused = await engine.search({ index: xrefs, filter_path: ['hits.hits._id'] }).then(() => undefined, (error: Error) => error);
      expect(refused?.message).to.match(/filter_path cannot be batched/);
    });
  });

  describe('the source catalog the API reads names and links from', () => {
    const catalogEngine = new Engine({ ...readConfig(), ES_INDEX_PREFIX: `${engine.names.prefix}-catalog` });
    const source = (sourceID: number, name: string): SourceDocument => ({
      sourceID, name, nameLabel: name.toUpperCase(), nameLong: null, description: null, srcUrl: null, baseIdUrl: null, baseIdUrlAvailable: false,
      auxForUrl: false, srcDetails: null, srcReleaseNumber: null, srcReleaseDate: null, created: null, lastUpdated: null, updateComments: null, private: false, UCICount: 0,
    });

    before(async () => {
      await ensureBaseIndices(catalogEngine);
      await putSource(catalogEngine, source(1, 'chembl'));
    });
    after(async () => {
      await deleteIndicesByPrefix(catalogEngine.config.ES_URL, catalogEngine.names.prefix);
      await catalogEngine.close();
    });

    it('finds a source loaded after it was read once it is stale, and keeps serving the old list meanwhile', async () => {
      const catalog = new SourceCatalog(catalogEngine, 0);
      expect([...(await catalog.all()).keys()]).to.deep.equal([1]);
      await putSource(catalogEngine, source(101, 'nci_dtp'));
      // The list read before is served while a newer one is read ...
      expect([...(await catalog.all()).keys()]).to.deep.equal([1]);
      // ... and a source missing from it waits for the newer one.
      expect((await catalog.get(101))?.name).to.equal('nci_dtp');
      expect((await catalog.get(9))).to.equal(undefined);
    });
  });
});
