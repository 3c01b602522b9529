import { expect } from 'chai';
import { readConfig } from '../src/config';
import { Engine, mappingOf } from '../src/engine/client';

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
});
