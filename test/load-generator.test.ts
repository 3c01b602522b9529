// The open loop of bench:api and bench:scale (bench/load-generator.ts) reads answers
// from its own keep-alive sockets: what it counts must be what the server sent.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Connections, drivePaced } from '../bench/load-generator';

describe("the benchmarks' open loop", () => {
  let server: Server;
  let url: string;
  let answered = 0;
  const received: unknown[] = [];

  before(async () => {
    // Every 50th answer is a 404, every 7th carries 200 kB (many TCP reads), each its own Server-Timing.
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        answered += 1;
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        const text = JSON.stringify({ answer: answered, padding: answered % 7 === 0 ? 'x'.repeat(200_000) : '' });
        response.writeHead(answered % 50 === 0 ? 404 : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          'Server-Timing': `total;dur=${answered}`,
        });
        response.end(text);
      });
    });
    server.keepAliveTimeout = 200;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  beforeEach(() => {
    answered = 0;
    received.length = 0;
  });

  it(
    'counts each answer once, a 200 as a success and any other status as a ' +
      'failure named by its status, and reads the header asked for',
    async () => {
      const timings: string[] = [];
      const bodies = [
        { type: 'inchikey', compound: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N' },
        { type: 'sourceID', compound: 'CHEMBL25 é', sourceID: 1 },
      ];
      const measure = await drivePaced(url, '/api/v1/compounds', bodies, 1, 400, 'server-timing', (_status, timing) =>
        timings.push(timing!),
      );
      expect(answered).to.equal(400);
      expect(measure.requests).to.equal(392);
      expect(measure.failures).to.equal(8);
      expect(measure.failedBy).to.deep.equal({ 'HTTP 404': 8 });
      // The bodies in turn, each sent as given (requests on different connections may arrive out of order).
      const sent = (body: object): number =>
        received.filter((one) => JSON.stringify(one) === JSON.stringify(body)).length;
      expect([sent(bodies[0]), sent(bodies[1])]).to.deep.equal([200, 200]);
      expect(timings.map((timing) => Number(timing.replace('total;dur=', ''))).sort((a, b) => a - b)).to.deep.equal(
        Array.from({ length: 400 }, (_, i) => i + 1),
      );
    },
  );

  it('opens a new connection when the server closed an idle one, without a failure', async () => {
    // Three requests a second: each finds the connection it used last closed after 200 ms idle.
    const measure = await drivePaced(
      url,
      '/api/v1/compounds',
      [{ type: 'inchikey', compound: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N' }],
      2,
      3,
    );
    expect(measure.requests).to.equal(6);
    expect(measure.failures).to.equal(0);
  });

  it(
    'does not reuse a connection idle longer than its limit, so a request ' + 'never races the server closing it',
    async () => {
      const opened: unknown[] = [];
      const count = (socket: unknown): number => opened.push(socket);
      server.on('connection', count);
      server.keepAliveTimeout = 10_000;
      const connections = new Connections(new URL(url), undefined, 100);
      try {
        const request = connections.request(
          '/api/v1/compounds',
          JSON.stringify({ type: 'inchikey', compound: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N' }),
        );
        await connections.send(request);
        await connections.send(request);
        expect(opened).to.have.length(1);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await connections.send(request);
        expect(opened).to.have.length(2);
      } finally {
        connections.close();
        server.off('connection', count);
        server.keepAliveTimeout = 200;
      }
    },
  );
});
