import { expect } from 'chai';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readConfig } from '../src/config';
import {
  actionStart,
  bulkWrite,
  flushBytes,
  writeBulkBatches,
  BulkBatchBuilder,
  type BulkBatch,
  type BulkFailure,
} from '../src/engine/bulk';
import { Engine, mappingOf } from '../src/engine/client';
import { assignmentBulkLines, assignmentId } from '../src/engine/assignments';
import { bodiesSent } from './support/engine';
import type { AssignmentDocument } from '../src/engine/documents';

type Fault = 'busy-request' | 'busy-second-item';

/**
 * An HTTP proxy in front of the real engine that makes its first `_bulk` answer as a busy engine
 * does: the whole request refused with 429, or its second item refused with 429 (that item is taken
 * out of the request the engine sees, and a 429 put in its place in the answer). Every `_bulk`
 * body that passes is recorded.
 */
class BusyEngineProxy {
  readonly bulkBodies: string[] = [];
  private server: Server;
  private faulted = false;

  constructor(
    private readonly engineUrl: URL,
    private readonly fault: Fault,
  ) {
    this.server = createServer((request, response) => {
      void this.handle(request).then(({ status, body }) => {
        response.writeHead(status, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
        response.end(body);
      });
    });
  }

  listen(): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}`),
      ),
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage): Promise<{ status: number; body: string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body = Buffer.concat(chunks).toString();
    const isBulk = request.url?.split('?')[0].endsWith('/_bulk') ?? false;
    if (!isBulk || this.faulted) {
      if (isBulk) this.bulkBodies.push(body);
      return this.forward(request, body);
    }
    this.faulted = true;
    if (this.fault === 'busy-request') {
      return {
        status: 429,
        body: JSON.stringify({
          error: { type: 'es_rejected_execution_exception', reason: 'rejected execution of coordinating operation' },
          status: 429,
        }),
      };
    }
    const lines = body.split('\n');
    body = [...lines.slice(0, 2), ...lines.slice(4)].join('\n');
    this.bulkBodies.push(body);
    const answer = await this.forward(request, body);
    const parsed = JSON.parse(answer.body) as { errors: boolean; items: unknown[] };
    parsed.items.splice(1, 0, {
      create: {
        status: 429,
        error: { type: 'es_rejected_execution_exception', reason: 'rejected execution of primary operation' },
      },
    });
    return { status: answer.status, body: JSON.stringify({ ...parsed, errors: true }) };
  }

  private forward(request: IncomingMessage, body: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const forwarded = httpRequest(
        {
          hostname: this.engineUrl.hostname,
          port: this.engineUrl.port,
          path: request.url,
          method: request.method,
          headers: { ...request.headers, 'content-length': Buffer.byteLength(body), host: this.engineUrl.host },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 502, body: Buffer.concat(chunks).toString() }),
          );
        },
      );
      forwarded.on('error', reject);
      forwarded.end(body);
    });
  }
}

const paracetamol = { standardInchiKey: 'RZVAJINKPMORJF-UHFFFAOYSA-N', connectivityBlock: 'RZVAJINKPMORJF' };

/** `count` ChEMBL-style assignments of paracetamol, as a batch of `create`s into `index`. */
function assignments(index: string, count: number, first = 0): BulkBatch<{ line: number }> {
  const builder = new BulkBatchBuilder<{ line: number }>();
  for (let line = first; line < first + count; line += 1) {
    const compoundId = `CHEMBL${112 + line}`;
    builder.add({
      index,
      id: assignmentId(1, 1, compoundId),
      op: 'create',
      context: { line },
      document: { sourceId: 1, compoundId, uci: 1, assignment: 1, ...paracetamol },
    });
  }
  return builder.take();
}

async function* batchesOf<T>(...batches: T[]): AsyncGenerator<T> {
  yield* batches;
}

describe('bulk writes of a load', () => {
  const engine = new Engine(readConfig());
  const index = `${engine.names.prefix}-bulk`;

  beforeEach(async () => {
    await engine.client.indices.delete({ index }, { ignore: [404] });
    await engine.client.indices.create({ index, ...mappingOf('assignments') });
  });

  after(async () => {
    await engine.client.indices.delete({ index }, { ignore: [404] });
    await engine.close();
  });

  const countIn = async (): Promise<number> => {
    await engine.client.indices.refresh({ index });
    return (await engine.client.count({ index })).count;
  };

  /** The body size of each bulk request `engine` sends while `work` runs. */
  const bulkRequestSizes = async (work: () => Promise<unknown>): Promise<number[]> =>
    (await bodiesSent(engine, '/_bulk', work)).map((body) => (body as Buffer).length);

  it('writes 40,000 assignments in requests of at most 4 MB, each document once', async () => {
    const batches = [assignments(index, 25_000), assignments(index, 15_000, 25_000)];
    expect(batches[0].body.length, 'the first batch needs two requests').to.be.above(flushBytes);
    const sizes = await bulkRequestSizes(async () => {
      const written = await writeBulkBatches(engine, batchesOf(...batches), () => {
        throw new Error('nothing is refused');
      });
      expect(written).to.deep.equal({ written: 40_000, failed: 0 });
    });
    expect(await countIn()).to.equal(40_000);
    expect(sizes.length, 'bulk requests').to.be.at.least(3);
    for (const size of sizes) expect(size).to.be.at.most(flushBytes);
  });

  it('joins the documents of many small batches into one request', async () => {
    const small = Array.from({ length: 40 }, (_, i) => assignments(index, 5, 5 * i));
    const sizes = await bulkRequestSizes(async () => {
      expect(
        await writeBulkBatches(engine, batchesOf(...small), () => {
          throw new Error('nothing is refused');
        }),
      ).to.deep.equal({ written: 200, failed: 0 });
    });
    expect(await countIn()).to.equal(200);
    expect(sizes).to.have.length(1);
  });

  it('reports a document the engine refuses with the row it came from, and writes the others', async () => {
    const failures: BulkFailure<{ line: number }>[] = [];
    async function* items(): AsyncGenerator<{
      index: string;
      id: string;
      op: 'create';
      document: object;
      context: { line: number };
    }> {
      yield {
        index,
        id: 'CHEMBL112',
        op: 'create',
        document: { sourceId: 1, compoundId: 'CHEMBL112', uci: 1, assignment: 1, ...paracetamol },
        context: { line: 2 },
      };
      yield {
        index,
        id: 'CHEMBL25',
        op: 'create',
        document: {
          sourceId: 1,
          compoundId: 'CHEMBL25',
          uci: 'two',
          assignment: 1,
          standardInchiKey: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N',
          connectivityBlock: 'BSYNRYMUTXBXSQ',
        },
        context: { line: 3 },
      };
    }
    const written = await bulkWrite(engine, items(), (failure) => failures.push(failure));
    expect(written).to.deep.equal({ written: 1, failed: 1 });
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include({ status: 400, id: 'CHEMBL25' });
    expect(failures[0].context).to.deep.equal({ line: 3 });
    expect(failures[0].reason).to.match(/uci/);
    expect(await countIn()).to.equal(1);
  });

  it(
    'writes non-ASCII compound ids whole across requests, and reports a ' +
      'refused document after them with its own row',
    async () => {
      // 10,000 ids of characters of 2 to 4 UTF-8 bytes: the batch is cut into requests by bytes, not characters.
      const builder = new BulkBatchBuilder<{ line: number }>();
      const compoundIdOf = (line: number): string =>
        `対乙酰氨基酚-Paracétamol-𝛼-${line}`.repeat(line % 7 === 0 ? 20 : 1);
      for (let line = 1; line <= 10_000; line += 1) {
        const compoundId = compoundIdOf(line);
        const uci = line === 7_500 ? 'two' : 1; // refused by the mapping
        builder.add({
          index,
          id: assignmentId(1, 1, compoundId),
          op: 'create',
          context: { line },
          document: { sourceId: 1, compoundId, uci, assignment: 1, ...paracetamol },
        });
      }
      const batch = builder.take();
      expect(batch.body.length).to.be.above(batch.body.toString().length);
      expect(batch.body.length, 'the batch needs two requests').to.be.above(flushBytes);
      const failures: BulkFailure<{ line: number }>[] = [];
      const sizes = await bulkRequestSizes(async () => {
        expect(await writeBulkBatches(engine, batchesOf(batch), (failure) => failures.push(failure))).to.deep.equal({
          written: 9_999,
          failed: 1,
        });
      });
      expect(sizes.length, 'bulk requests').to.be.at.least(2);
      expect(failures.map((failure) => [failure.id, failure.context])).to.deep.equal([
        [assignmentId(1, 1, compoundIdOf(7_500)), { line: 7_500 }],
      ]);
      expect(await countIn()).to.equal(9_999);
      const stored = await engine.client.search<{ compoundId: string }>({
        index,
        size: 10,
        query: { terms: { compoundId: [compoundIdOf(7), compoundIdOf(9_999)] } },
      });
      expect(stored.hits.hits.map((hit) => hit._source!.compoundId).sort()).to.deep.equal(
        [compoundIdOf(7), compoundIdOf(9_999)].sort(),
      );
    },
  );

  it("writes an assignment's document exactly as JSON.stringify does, whatever its compound id holds", () => {
    for (const compoundId of [
      'CHEMBL112',
      'say "paracetamol"',
      'back\\slash\ttab',
      'Ünïcødé-α',
      '\u0001control',
      'line\nbreak',
    ]) {
      for (const auxSrc of [undefined, 'NCI', null]) {
        const document: AssignmentDocument = {
          sourceId: 1,
          compoundId,
          uci: 1,
          assignment: 1,
          ...paracetamol,
          ...(auxSrc !== undefined ? { auxSrc } : {}),
        };
        const id = assignmentId(1, 1, compoundId);
        expect(assignmentBulkLines(actionStart('index', index), id, document)).to.equal(
          `${JSON.stringify({ index: { _index: index, _id: id } })}\n${JSON.stringify(document)}\n`,
        );
      }
    }
  });

  for (const fault of ['busy-request', 'busy-second-item'] as const) {
    it(
      `writes every document when the engine is too busy (429) for ` +
        `${fault === 'busy-request' ? 'a whole request' : 'one document'} at first`,
      async () => {
        const proxy = new BusyEngineProxy(new URL(readConfig().ES_URL.split(',')[0]), fault);
        const viaProxy = new Engine(readConfig({ ...process.env, ES_URL: await proxy.listen() }));
        try {
          const written = await writeBulkBatches(viaProxy, batchesOf(assignments(index, 3)), () => {
            throw new Error('nothing is refused');
          });
          expect(written).to.deep.equal({ written: 3, failed: 0 });
          expect(await countIn()).to.equal(3);
          const sent = proxy.bulkBodies.map((body) => body.split('\n').filter(Boolean).length / 2);
          // The whole request again, or only the refused document.
          expect(sent).to.deep.equal(fault === 'busy-request' ? [3] : [2, 1]);
          expect(proxy.bulkBodies.at(-1)).to.contain(fault === 'busy-request' ? 'CHEMBL112' : 'CHEMBL113');
        } finally {
          await viaProxy.close();
          await proxy.close();
        }
      },
    );
  }
});
