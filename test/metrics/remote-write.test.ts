import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { uncompress } from 'snappyjs';
import { afterEach, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../src/metrics/families.ts';
import { RemoteWriteQueue } from '../../src/metrics/push.ts';
import {
  encodeBatch,
  encodeMetadata,
  WriteRequest,
  writeRequestBody,
} from '../../src/metrics/remote-write.ts';
import type { Series } from '../../src/metrics/series.ts';
import { freePort } from '../helpers/free-port.ts';

/**
 * The remote-write encoding (protobufjs and snappyjs, decoded back with the same libraries) and the
 * sink's queue against real loopback servers: one that takes everything, one that refuses, one that
 * never answers. The run must never wait on the sink, and what it drops is counted.
 */

interface Decoded {
  timeseries: {
    labels: { name: string; value: string }[];
    samples: { value: number; timestamp: number }[];
  }[];
  metadata: { type: number; metric_family_name: string; help: string }[];
}

function decode(body: Uint8Array): Decoded {
  const message = WriteRequest.decode(uncompress(body));
  return WriteRequest.toObject(message, { longs: Number, arrays: true, enums: Number }) as Decoded;
}

const IDENTITY = { scenario: 'unit', run_id: 'r1', target: 'http://127.0.0.1:1', plan: 'free' };

const seriesOf = (n: number, value = 1): Series[] =>
  Array.from({ length: n }, (_, i) => ({
    name: FAMILIES.requests.name,
    labels: { operation: `op${i}` },
    value,
  }));

describe('remote-write encoding', () => {
  it('round-trips through protobuf and snappy, labels sorted with __name__ first', () => {
    const series: Series[] = [
      {
        name: 'petstore_load_requests_total',
        labels: { status_class: '2xx', operation: 'listPets' },
        value: 42,
      },
      { name: 'petstore_load_violations_total', labels: {}, value: 0 },
      // A series' own plan (a tier's) wins over the run's; an empty value is no label.
      { name: 'petstore_load_tier_requests_total', labels: { plan: 'pro', group: '' }, value: 7.5 },
    ];
    const at = 1_790_000_000_123;
    const decoded = decode(writeRequestBody([encodeBatch(series, IDENTITY, at).bytes]));
    expect(decoded.timeseries).toHaveLength(3);
    for (const ts of decoded.timeseries) {
      const names = ts.labels.map((l) => l.name);
      expect(names[0]).toBe('__name__');
      expect(names.slice(1)).toEqual([...names.slice(1)].sort());
      expect(ts.samples).toHaveLength(1);
      expect(ts.samples[0]?.timestamp).toBe(at);
    }
    const [first, , tier] = decoded.timeseries;
    expect(first?.labels).toEqual([
      { name: '__name__', value: 'petstore_load_requests_total' },
      { name: 'operation', value: 'listPets' },
      { name: 'plan', value: 'free' },
      { name: 'run_id', value: 'r1' },
      { name: 'scenario', value: 'unit' },
      { name: 'status_class', value: '2xx' },
      { name: 'target', value: 'http://127.0.0.1:1' },
    ]);
    expect(first?.samples[0]?.value).toBe(42);
    expect(tier?.labels.find((l) => l.name === 'plan')?.value).toBe('pro');
    expect(tier?.labels.some((l) => l.name === 'group')).toBe(false);
    expect(tier?.samples[0]?.value).toBe(7.5);
  });

  it('concatenated WriteRequests decode as one: metadata and every batch in order', () => {
    const metadata = encodeMetadata([FAMILIES.requests, FAMILIES.serviceTime]);
    const a = encodeBatch(seriesOf(2, 1), IDENTITY, 1000);
    const b = encodeBatch(seriesOf(2, 2), IDENTITY, 2000);
    const decoded = decode(writeRequestBody([metadata, a.bytes, b.bytes]));
    expect(decoded.metadata.map((m) => [m.metric_family_name, m.type])).toEqual([
      ['petstore_load_requests_total', 1],
      ['petstore_load_service_time_seconds', 3],
    ]);
    expect(decoded.timeseries.map((t) => [t.samples[0]?.timestamp, t.samples[0]?.value])).toEqual([
      [1000, 1],
      [1000, 1],
      [2000, 2],
      [2000, 2],
    ]);
  });
});

/** A loopback endpoint whose answer the test sets; it keeps every body it was sent, decoded. */
class Endpoint {
  readonly bodies: Decoded[] = [];
  answer: 'ok' | 'refuse' | 'bad' | 'hang' = 'ok';
  private readonly hanging: ServerResponse[] = [];
  readonly server: Server;
  readonly url: URL;

  constructor(server: Server, url: URL) {
    this.server = server;
    this.url = url;
  }

  static async start(): Promise<Endpoint> {
    let self: Endpoint | undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => self?.handle(Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || !address) throw new Error('no address');
    self = new Endpoint(server, new URL(`http://127.0.0.1:${address.port}/api/v1/write`));
    return self;
  }

  private handle(body: Buffer, res: ServerResponse): void {
    if (this.answer === 'hang') {
      this.hanging.push(res);
      return;
    }
    if (this.answer === 'refuse') return void res.writeHead(503).end('try later\n');
    if (this.answer === 'bad') return void res.writeHead(400).end('out of order sample\n');
    this.bodies.push(decode(body));
    res.writeHead(204).end();
  }

  /** Requests held unanswered (`hang`). */
  pending(): number {
    return this.hanging.length;
  }

  /** Samples received, excluding the sink's own dropped-samples counter. */
  values(): number[] {
    return this.bodies.flatMap((b) =>
      b.timeseries
        .filter((t) => t.labels[0]?.value === FAMILIES.requests.name)
        .map((t) => t.samples[0]?.value as number),
    );
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the sink queue', () => {
  let endpoint: Endpoint | undefined;
  afterEach(async () => {
    await endpoint?.close();
    endpoint = undefined;
  });

  it('pushes batches in order and counts what was pushed', async () => {
    endpoint = await Endpoint.start();
    const queue = new RemoteWriteQueue({ endpoint: { url: endpoint.url }, identity: IDENTITY });
    for (let i = 1; i <= 3; i++) queue.offer(seriesOf(10, i), 1000 * i);
    const report = await queue.drain(3000);
    // Each batch carries the sink's own dropped-samples counter too.
    expect(report).toMatchObject({ pushedSamples: 33, droppedSamples: 0, failedPushes: 0 });
    expect(endpoint.values()).toEqual(
      [...seriesOf(10, 1), ...seriesOf(10, 2), ...seriesOf(10, 3)].map((s) => s.value),
    );
  });

  it('keeps a refused batch for the next push, drops the oldest beyond the bound and counts them', async () => {
    endpoint = await Endpoint.start();
    endpoint.answer = 'refuse';
    // Each batch is 10 series and the counter: 11 samples; the bound holds 3 batches.
    const queue = new RemoteWriteQueue({
      endpoint: { url: endpoint.url },
      identity: IDENTITY,
      maxQueuedSamples: 33,
    });
    for (let i = 1; i <= 6; i++) {
      queue.offer(seriesOf(10, i), 1000 * i);
      // Each offer's POST answered before the next (else it would wait behind the one in flight).
      await until(() => queue.report.failedPushes >= i);
    }
    // One failed POST per offer: a refused batch is kept for the next POST, not retried on its own.
    expect(queue.report.failedPushes).toBe(6);
    expect(queue.report.droppedSamples).toBe(33);
    expect(queue.report.dropReason).toBe('queue full');
    expect(queue.report.lastError).toBe('HTTP 503: try later');
    endpoint.answer = 'ok';
    queue.offer(seriesOf(10, 7), 7000);
    const report = await queue.drain(3000);
    // The 7th batch made room by dropping the 4th: 5 to 7 arrive, oldest first. The counter the last
    // one carries was read before it was queued.
    expect(endpoint.values()).toEqual([5, 6, 7].flatMap((v) => seriesOf(10, v).map((s) => s.value)));
    expect(report.pushedSamples).toBe(33);
    expect(report.droppedSamples).toBe(44);
    const counters = endpoint.bodies.flatMap((b) =>
      b.timeseries
        .filter((t) => t.labels[0]?.value === FAMILIES.droppedSamples.name)
        .map((t) => t.samples[0]?.value),
    );
    expect(counters.at(-1)).toBe(33);
  });

  it('drops samples the endpoint refuses for good (a 4xx other than 429) and goes on', async () => {
    endpoint = await Endpoint.start();
    endpoint.answer = 'bad';
    const queue = new RemoteWriteQueue({ endpoint: { url: endpoint.url }, identity: IDENTITY });
    queue.offer(seriesOf(4, 1), 1000);
    await until(() => queue.report.failedPushes === 1);
    expect(queue.report).toMatchObject({ droppedSamples: 5, dropReason: 'HTTP 400: out of order sample' });
    endpoint.answer = 'ok';
    queue.offer(seriesOf(4, 2), 2000);
    const report = await queue.drain(3000);
    expect(report).toMatchObject({ pushedSamples: 5, droppedSamples: 5, failedPushes: 1 });
    expect(endpoint.values()).toEqual([2, 2, 2, 2]);
  });

  it('never throws nor delays the run: offer returns at once, drain ends by its deadline', async () => {
    endpoint = await Endpoint.start();
    endpoint.answer = 'hang';
    const closed = new URL(`http://127.0.0.1:${await freePort()}/api/v1/write`);
    for (const url of [endpoint.url, closed]) {
      const queue = new RemoteWriteQueue({ endpoint: { url }, identity: IDENTITY });
      // offer only queues: it returns nothing to wait for, and all 20 are taken while the endpoint
      // hangs on the first POST (how long the encoding takes is the machine's, not a verdict).
      for (let i = 1; i <= 20; i++) queue.offer(seriesOf(100, i), 1000 * i);
      // Every batch taken while the first POST hangs: none dropped, none pushed yet.
      expect(queue.report).toMatchObject({ droppedSamples: 0, pushedSamples: 0 });
      const drainStarted = performance.now();
      const report = await queue.drain(300);
      // Ended by its deadline, not by the POST's own 10 s timeout nor never: the bound sits between
      // them, with the slack of a loaded 2-core machine.
      expect(performance.now() - drainStarted).toBeLessThan(5000);
      expect(report.pushedSamples).toBe(0);
      expect(report.droppedSamples).toBe(20 * 101);
      expect(report.dropReason).toBe('not sent by the end of the run');
      expect(report.lastError).toMatch(url === closed ? /ECONNREFUSED/ : /deadline/);
      // One POST at a time: a hanging endpoint held one, and no other was started beside it.
      if (url === endpoint.url) expect(endpoint.pending()).toBe(1);
    }
  });
});
