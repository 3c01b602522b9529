import { expect } from 'chai';
import { readConfig } from '../src/config';
import { Engine, mappingOf } from '../src/engine/client';
import { exactFieldsOf } from '../src/engine/merge';
import { EngineUnavailable, translateEngineError } from '../src/engine/errors';
import { ensureBaseIndices, releaseShards } from '../src/engine/schema';
import { putSource } from '../src/engine/sources';
import { SourceCatalog } from '../src/domain/sources';
import type { SourceDocument } from '../src/engine/documents';
import { deleteIndicesByPrefix, msearchesSent } from './support/engine';
import { fixturePrefix, testConfig } from './support/fixture';
import { assignmentsByUcis } from '../src/engine/lookups';
import { allocateUcis, nextUci, raiseSequenceAbove, type SequenceMemory } from '../src/engine/sequence';

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
    await engine.client.indices.create({ index, ...mappingOf('assignments') });
    await engine.client.bulk({
      refresh: true,
      operations: [
        { index: { _index: index } },
        {
          sourceId: 1,
          compoundId: 'CHEMBL112',
          uci: 1,
          assignment: 1,
          standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
          connectivityBlock: 'RZVAJINKPMORJF',
        },
        { index: { _index: index } },
        {
          sourceId: 101,
          compoundId: '3991',
          uci: 1,
          assignment: 1,
          standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
          connectivityBlock: 'RZVAJINKPMORJF',
        },
        { index: { _index: index } },
        {
          sourceId: 1,
          compoundId: 'CHEMBL25',
          uci: 2,
          assignment: 1,
          standardInchiKey: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N',
          connectivityBlock: 'BSYNRYMUTXBXSQ',
        },
      ],
    });
    const found = await engine.client.search<{ compoundId: string }>({
      index,
      query: { term: { standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N' } },
      sort: [{ compoundId: 'asc' }],
    });
    expect(found.hits.hits.map((hit) => hit._source?.compoundId)).to.deep.equal(['3991', 'CHEMBL112']);
    await engine.client.indices.delete({ index });
    expect(await engine.client.indices.exists({ index })).to.equal(false);
  });

  describe('searches sent together in one _msearch (src/engine/msearch-batcher.ts)', () => {
    const assignments = `${engine.names.prefix}-batch`;
    const paracetamol = 'RZVAJINKPMORJF-UHFFFAOYSA-N';
    const aspirin = 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N';

    before(async () => {
      await engine.client.indices.create({ index: assignments, ...mappingOf('assignments') });
      await engine.client.bulk({
        refresh: true,
        operations: [
          { index: { _index: assignments } },
          {
            sourceId: 1,
            compoundId: 'CHEMBL112',
            uci: 1,
            assignment: 1,
            standardInchiKey: paracetamol,
            connectivityBlock: 'RZVAJINKPMORJF',
          },
          { index: { _index: assignments } },
          {
            sourceId: 101,
            compoundId: '3991',
            uci: 1,
            assignment: 1,
            standardInchiKey: paracetamol,
            connectivityBlock: 'RZVAJINKPMORJF',
          },
          { index: { _index: assignments } },
          {
            sourceId: 1,
            compoundId: 'CHEMBL25',
            uci: 2,
            assignment: 1,
            standardInchiKey: aspirin,
            connectivityBlock: 'BSYNRYMUTXBXSQ',
          },
        ],
      });
    });
    after(async () => {
      await engine.client.indices.delete({ index: assignments }, { ignore: [404] });
    });

    /** The compound ids of the assignments `query` finds (the first 10, by id), as one search. */
    const compoundIdsOf = (query: Record<string, unknown>) =>
      engine
        .search<{ compoundId: string }>({
          index: assignments,
          query,
          sort: [{ compoundId: 'asc' }],
          size: 10,
          track_total_hits: false,
        })
        .then((found) => found.hits.hits.map((hit) => hit._source!.compoundId));
    const idsOf = (key: string) => compoundIdsOf({ term: { standardInchiKey: key } });

    it('answers each of many searches sent at once with its own hits', async () => {
      const keys = Array.from({ length: 150 }, (_, i) =>
        i % 3 === 2 ? 'AAAAAAAAAAAAAA-UHFFFAOYSA-N' : i % 3 === 1 ? aspirin : paracetamol,
      );
      const answers = await Promise.all(keys.map(idsOf));
      answers.forEach((ids, i) =>
        expect(ids).to.deep.equal(
          keys[i] === paracetamol ? ['3991', 'CHEMBL112'] : keys[i] === aspirin ? ['CHEMBL25'] : [],
        ),
      );
    });

    /** The searches of every `_msearch` the engine receives while `work` runs. */
    const searchesSent = async (work: () => Promise<unknown>): Promise<Record<string, unknown>[]> =>
      (await msearchesSent(engine, work)).flat();

    it('sends the key lookups of concurrent requests to the engine as one search', async () => {
      const keys = [paracetamol, aspirin, 'AAAAAAAAAAAAAA-UHFFFAOYSA-N', paracetamol];
      let answers: string[][] = [];
      const sent = await searchesSent(async () => {
        answers = await Promise.all(keys.map(idsOf));
      });
      expect(answers).to.deep.equal([['3991', 'CHEMBL112'], ['CHEMBL25'], [], ['3991', 'CHEMBL112']]);
      expect(sent).to.have.length(1);
      expect(sent[0].size).to.equal(40);
      expect(sent[0].query).to.deep.equal({
        bool: { filter: [{ terms: { standardInchiKey: [paracetamol, aspirin, 'AAAAAAAAAAAAAA-UHFFFAOYSA-N'] } }] },
      });
    });

    it('gives each merged search only its own page, and asks again alone when the merged page was full', async () => {
      // Size 1 each: the merged page of 2 holds paracetamol's two hits (3991 sorts first), none of aspirin's.
      const firstOf = (key: string) =>
        engine
          .search<{ compoundId: string }>({
            index: assignments,
            query: { bool: { filter: [{ terms: { standardInchiKey: [key] } }, { term: { assignment: 1 } }] } },
            sort: [{ compoundId: 'asc' }],
            size: 1,
            track_total_hits: false,
          })
          .then((found) => found.hits.hits.map((hit) => hit._source!.compoundId));
      let answers: string[][] = [];
      const sent = await searchesSent(async () => {
        answers = await Promise.all([firstOf(paracetamol), firstOf(aspirin)]);
      });
      expect(answers).to.deep.equal([['3991'], ['CHEMBL25']]);
      expect(sent.map((body) => body.size)).to.deep.equal([2, 1]);
    });

    const ofUci = (uci: string | number) => compoundIdsOf({ term: { uci } });
    const ofUcis = (ucis: number[]) => compoundIdsOf({ terms: { uci: ucis } });

    it('sends searches that waited through a long turn of the event loop before the turn ends', async () => {
      const order: string[] = [];
      let answers: string[][] = [];
      const sent = await msearchesSent(engine, async () => {
        const listener = (): void => {
          order.push('_msearch');
        };
        engine.client.diagnostic.on('request', listener);
        try {
          const first = ofUci(1);
          await Promise.resolve();
          // One _msearch in flight: what is asked now waits to be merged, at most about 1 ms.
          setImmediate(() => order.push('check phase'));
          const second = ofUci(2);
          const busyUntil = process.hrtime.bigint() + 3_000_000n;
          while (process.hrtime.bigint() < busyUntil) {
            /* a 3 ms callback */
          }
          const third = ofUci(1);
          answers = await Promise.all([first, second, third]);
        } finally {
          engine.client.diagnostic.removeListener('request', listener);
        }
      });
      expect(answers).to.deep.equal([['3991', 'CHEMBL112'], ['CHEMBL25'], ['3991', 'CHEMBL112']]);
      expect(sent).to.have.length(2);
      expect(order).to.deep.equal(['_msearch', '_msearch', 'check phase']);
    });

    it('merges only values that read back as written: a long asked as "1.0" goes alone', async () => {
      let answers: string[][] = [];
      const sent = await searchesSent(async () => {
        answers = await Promise.all([ofUci('1.0'), ofUci(1), ofUci(2)]);
      });
      expect(answers).to.deep.equal([['3991', 'CHEMBL112'], ['3991', 'CHEMBL112'], ['CHEMBL25']]);
      expect(sent).to.have.length(2);
    });

    it('sends each search of a merged search the engine refuses again alone', async () => {
      // Alone, each asks 2 terms; merged, 4: over this index's max_terms_count.
      await engine.client.indices.putSettings({ index: assignments, settings: { index: { max_terms_count: 2 } } });
      try {
        let answers: string[][] = [];
        const sent = await searchesSent(async () => {
          answers = await Promise.all([ofUcis([1, 5]), ofUcis([2, 6])]);
        });
        expect(answers).to.deep.equal([['3991', 'CHEMBL112'], ['CHEMBL25']]);
        expect(sent).to.have.length(3);
      } finally {
        await engine.client.indices.putSettings({
          index: assignments,
          settings: { index: { max_terms_count: null as never } },
        });
      }
    });

    it('keeps a merged search within the terms the engine accepts', async () => {
      const many = (first: number) => Array.from({ length: 6_000 }, (_, i) => first + i);
      let answers: string[][] = [];
      const sent = await searchesSent(async () => {
        answers = await Promise.all([ofUcis(many(1)), ofUcis(many(2)), ofUcis([1])]);
      });
      expect(answers).to.deep.equal([['3991', 'CHEMBL112', 'CHEMBL25'], ['CHEMBL25'], ['3991', 'CHEMBL112']]);
      // The first alone (6,000 terms), the other two merged (6,001).
      expect(sent.map((body) => JSON.stringify(body.query).split(',').length)).to.deep.equal([6_000, 6_001]);
    });

    it('merges only on fields whose stored value is the term matched: plain keywords and integers', () => {
      const exact = exactFieldsOf([
        mappingOf('compounds'),
        mappingOf('assignments'),
        mappingOf('sources'),
        { mappings: { properties: { name: { type: 'keyword', normalizer: 'lowercase' } } } },
      ]);
      expect(exact.get('uci')).to.equal('integer');
      expect(exact.get('standardInchiKey')).to.equal('keyword');
      expect(exact.get('compoundId')).to.equal('keyword');
      expect(exact.has('description')).to.equal(false); // text
      expect(exact.has('name')).to.equal(false); // a normalizer in one mapping
    });

    it('does not merge searches that count their hits', async () => {
      const counted = (key: string) =>
        engine
          .search({ index: assignments, query: { term: { standardInchiKey: key } }, size: 10, track_total_hits: true })
          .then((found) => (found.hits.total as { value: number }).value);
      let totals: number[] = [];
      const sent = await searchesSent(async () => {
        totals = await Promise.all([counted(paracetamol), counted(aspirin)]);
      });
      expect(totals).to.deep.equal([2, 1]);
      expect(sent).to.have.length(2);
    });

    it('fails only the search whose index is missing, with the error a lone search would give', async () => {
      const [good, missing] = await Promise.allSettled([
        idsOf(aspirin),
        engine.search({ index: `${engine.names.prefix}-no-such-index`, query: { match_all: {} } }),
      ]);
      expect(good).to.deep.equal({ status: 'fulfilled', value: ['CHEMBL25'] });
      expect(missing.status).to.equal('rejected');
      const translated = translateEngineError((missing as PromiseRejectedResult).reason);
      expect(translated).to.be.instanceOf(EngineUnavailable);
      expect((translated as Error).message).to.match(/indices are missing/);
    });

    it('refuses a URL-only search parameter instead of dropping it', async () => {
      const refused = await engine.search({ index: assignments, filter_path: ['hits.hits._id'] }).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(refused?.message).to.match(/filter_path cannot be batched/);
    });
  });

  describe('the source catalog the API reads names and links from', () => {
    const catalogEngine = new Engine({ ...readConfig(), ES_INDEX_PREFIX: `${engine.names.prefix}-catalog` });
    const source = (sourceID: number, name: string): SourceDocument => ({
      sourceID,
      name,
      nameLabel: name.toUpperCase(),
      nameLong: null,
      description: null,
      srcUrl: null,
      baseIdUrl: null,
      baseIdUrlAvailable: false,
      auxForUrl: false,
      srcDetails: null,
      srcReleaseNumber: null,
      srcReleaseDate: null,
      created: null,
      lastUpdated: null,
      updateComments: null,
      private: false,
      UCICount: 0,
    });

    before(async () => {
      await ensureBaseIndices(catalogEngine);
      await putSource(catalogEngine, source(1, 'chembl'));
    });
    after(async () => {
      await deleteIndicesByPrefix(catalogEngine.config.ES_URL, catalogEngine.names.prefix);
      await catalogEngine.close();
    });

    it(
      'finds a source loaded after it was read once it is stale, and keeps ' + 'serving the old list meanwhile',
      async () => {
        const catalog = new SourceCatalog(catalogEngine, 0);
        expect([...(await catalog.all()).keys()]).to.deep.equal([1]);
        await putSource(catalogEngine, source(101, 'nci_dtp'));
        // The list read before is served while a newer one is read ...
        expect([...(await catalog.all()).keys()]).to.deep.equal([1]);
        // ... and a source missing from it waits for the newer one.
        expect((await catalog.get(101))?.name).to.equal('nci_dtp');
        expect(await catalog.get(9)).to.equal(undefined);
      },
    );
  });

  describe('the UCI sequence', () => {
    const sequenceEngine = new Engine({ ...readConfig(), ES_INDEX_PREFIX: `${engine.names.prefix}-sequence` });
    before(() => ensureBaseIndices(sequenceEngine));
    after(async () => {
      await deleteIndicesByPrefix(sequenceEngine.config.ES_URL, sequenceEngine.names.prefix);
      await sequenceEngine.close();
    });

    it(
      'a load that raises it batch after batch, without reading it first, ' +
        'still sees UCIs another load took in between',
      async () => {
        const loader: SequenceMemory = {};
        expect(await raiseSequenceAbove(sequenceEngine, 100, loader)).to.equal(1);
        const reads = async (): Promise<number> =>
          (await sequenceEngine.client.indices.stats({ index: sequenceEngine.names.meta, metric: 'get' }))._all
            .primaries!.get!.total!;
        const readsBefore = await reads();
        expect(await raiseSequenceAbove(sequenceEngine, 200, loader)).to.equal(101);
        expect(await reads()).to.equal(readsBefore);
        // Another load takes UCIs 201–250: the next raise's write against the remembered version is refused and it
        // reads again.
        expect(await allocateUcis(sequenceEngine, 50)).to.equal(201);
        expect(await raiseSequenceAbove(sequenceEngine, 300, loader)).to.equal(251);
        expect(await raiseSequenceAbove(sequenceEngine, 280, loader)).to.equal(301);
        expect(await nextUci(sequenceEngine)).to.equal(301);
      },
    );
  });

  it(
    'a release index gets one shard per RELEASE_SHARD_ASSIGNMENTS ' +
      'assignments it will hold, between one and ES_SHARDS',
    () => {
      const engine = {
        config: readConfig({ ...process.env, ES_SHARDS: '3', RELEASE_SHARD_ASSIGNMENTS: '200000000' }),
      } as Engine;
      // A small source, PubChem's 120M ids, a whole dump of 600M, more than three shards' worth.
      expect(
        [0, 1_000, 120_000_000, 200_000_001, 600_000_000, 2_000_000_000].map((n) => releaseShards(engine, n)),
      ).to.deep.equal([1, 1, 1, 2, 3, 3]);
    },
  );

  it(
    'an answer longer than one page is read whole, in order, from one ' + 'point in time that is closed after',
    async () => {
      const engine = new Engine(testConfig(await fixturePrefix()));
      try {
        const ucis = Array.from({ length: 2_000 }, (_, i) => i + 1);
        const openContexts = async (): Promise<number> => {
          const stats = (await engine.client.nodes.stats({
            metric: ['indices'],
            index_metric: ['search'],
          })) as unknown as { nodes: Record<string, { indices: { search: { open_contexts: number } } }> };
          return Object.values(stats.nodes).reduce((sum, node) => sum + node.indices.search.open_contexts, 0);
        };
        const before = await openContexts();
        const paged = await assignmentsByUcis(engine, ucis, { includeObsolete: true });
        const whole = await engine.client.search<{ uci: number; sourceId: number; compoundId: string }>({
          index: engine.names.assignments,
          size: 10_000,
          query: { terms: { uci: ucis } },
          sort: [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }],
        });
        expect(paged.length).to.be.greaterThan(100);
        expect(paged.map((x) => `${x.uci}:${x.sourceId}:${x.compoundId}`)).to.deep.equal(
          whole.hits.hits.map((h) => `${h._source!.uci}:${h._source!.sourceId}:${h._source!.compoundId}`),
        );
        expect(await openContexts()).to.equal(before);
      } finally {
        await engine.close();
      }
    },
  );
});
