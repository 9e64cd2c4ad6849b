import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliWorkspace, readTree, runCli } from '../helpers/integration-cli.ts';

/**
 * A `--spec` document whose operations declare where the key goes (modelled on the Swagger Petstore
 * 3 document), run through the real CLI against a mock that answers 401 unless the key is exactly
 * there: the client sends it as each operation's scheme says, `--auth-header` overrides it, and the
 * key shows in no file of the run's output.
 */

const FIXTURE = 'test/fixtures/petstore3-apikey.yaml';
const KEY = 'k-secret-7f3a91';
const ITERATIONS = 6;

interface Seen {
  op: string;
  status: number;
  headers: IncomingMessage['headers'];
  query: URLSearchParams;
}

/** Where the mock wants the key: per operation, or one header for every operation. */
type Want = (op: string) => { header?: string; bearer?: boolean; query?: string };

const DOCUMENT: Want = (op) =>
  op === 'getInventory'
    ? { header: 'api_key' }
    : op === 'findPetsByStatus'
      ? { query: 'api_key' }
      : { header: 'authorization', bearer: true };

function keyIn(req: IncomingMessage, query: URLSearchParams, want: ReturnType<Want>): boolean {
  if (want.query) return query.get(want.query) === KEY && req.headers.authorization === undefined;
  const value = req.headers[want.header as string];
  const others = want.header !== 'authorization' && req.headers.authorization !== undefined;
  return !others && value === (want.bearer ? `Bearer ${KEY}` : KEY);
}

function operationOf(pathname: string): string {
  if (pathname === '/store/inventory') return 'getInventory';
  if (pathname === '/pet/findByStatus') return 'findPetsByStatus';
  if (pathname.startsWith('/store/order/')) return 'getOrderById';
  return 'other';
}

/** `seen`: the requests to the operations it knows; `every`: each request it got, wherever it went. */
async function startMock(
  want: Want,
): Promise<{ server: Server; url: string; seen: Seen[]; every: string[] }> {
  const seen: Seen[] = [];
  const every: string[] = [];
  const server = createServer((req, res) => {
    every.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://mock');
    const op = operationOf(url.pathname);
    const ok = op !== 'other' && keyIn(req, url.searchParams, want(op));
    const status = op === 'other' ? 404 : ok ? 200 : 401;
    if (op !== 'other') seen.push({ op, status, headers: req.headers, query: url.searchParams });
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(ok ? (op === 'findPetsByStatus' ? '[]' : '{"available": 3}') : '{"message":"unauthorized"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, every };
}

const SCENARIO = `export default {
  name: 'inventory',
  workload: { executor: 'constant-vus', vus: 1, iterations: ${ITERATIONS}, duration: '20s' },
  flows: [{ name: 'inventory', run: async (api: { call(id: string, input?: object): Promise<unknown> }) => {
    await api.call('getInventory');
    await api.call('findPetsByStatus', { query: { status: 'available' } });
    await api.call('getOrderById', { path: { orderId: 1 } });
  } }],
};
`;

const work = cliWorkspace('auth-placement');
let scenarioPath: string;

beforeAll(() => {
  const dir = work.fresh('scenario');
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
  scenarioPath = join(dir, 'inventory.ts');
  writeFileSync(scenarioPath, SCENARIO);
});

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

async function runAgainst(
  want: Want,
  extra: string[],
): Promise<{ seen: Seen[]; out: string; code: number | null; stderr: string }> {
  const mock = await startMock(want);
  servers.push(mock.server);
  const out = work.fresh('out');
  const result = await runCli(
    [
      'run',
      '--spec',
      FIXTURE,
      '--base-url',
      mock.url,
      '--api-key',
      KEY,
      '--out',
      out,
      // The plan's pace at time scale 60 (a request a second at 1): where the key goes is this
      // test's business, not how long the run waits.
      '--time-scale',
      '60',
      ...extra,
      scenarioPath,
    ],
    50_000,
  );
  return { seen: mock.seen, out, code: result.code, stderr: result.stderr + result.stdout };
}

function keyInNoFile(out: string): void {
  const files = readTree(out);
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) expect(f.content.includes(KEY), `${f.path} holds the key`).toBe(false);
}

describe.concurrent('run --spec: the key where each operation says', () => {
  it('getInventory in an api_key header (never Authorization), findPetsByStatus in the query, others Bearer', async () => {
    const { seen, out, code, stderr } = await runAgainst(DOCUMENT, []);
    const inventory = seen.filter((s) => s.op === 'getInventory');
    expect(inventory.length, stderr).toBe(ITERATIONS);
    for (const s of inventory) {
      expect(s.status).toBe(200);
      expect(s.headers.api_key).toBe(KEY);
      expect(s.headers.authorization).toBeUndefined();
    }
    const byStatus = seen.filter((s) => s.op === 'findPetsByStatus');
    expect(byStatus.length).toBe(ITERATIONS);
    for (const s of byStatus)
      expect([s.status, s.query.get('api_key'), s.headers.api_key]).toEqual([200, KEY, undefined]);
    const orders = seen.filter((s) => s.op === 'getOrderById');
    expect(orders.length).toBe(ITERATIONS);
    for (const s of orders) expect([s.status, s.headers.authorization]).toEqual([200, `Bearer ${KEY}`]);
    expect(code, stderr).toBe(0);
    keyInNoFile(out);
  }, 60_000);

  it('--auth-header X-Key: the key in x-key on every operation, nowhere else', async () => {
    const { seen, out, code, stderr } = await runAgainst(
      () => ({ header: 'x-key' }),
      ['--auth-header', 'X-Key'],
    );
    expect(seen.length, stderr).toBe(3 * ITERATIONS);
    for (const s of seen) {
      expect([s.op, s.status, s.headers['x-key']]).toEqual([s.op, 200, KEY]);
      expect(s.headers.api_key).toBeUndefined();
      expect(s.query.get('api_key')).toBeNull();
    }
    expect(code, stderr).toBe(0);
    keyInNoFile(out);
  }, 60_000);

  it('--print-config says where the key goes per operation, sends nothing and shows no key', async () => {
    const mock = await startMock(DOCUMENT);
    servers.push(mock.server);
    const printed = await cliInProcess([
      'run',
      '--spec',
      FIXTURE,
      '--base-url',
      mock.url,
      '--api-key',
      KEY,
      '--print-config',
      scenarioPath,
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(`${printed.stdout}${printed.stderr}`.includes(KEY)).toBe(false);
    const config = JSON.parse(printed.stdout) as { auth: Record<string, string>; apiKey: string };
    expect(config.apiKey).toBe('from --api-key');
    expect(config.auth.getInventory).toMatch(/^header api_key\b/);
    expect(config.auth.getInventory).not.toMatch(/Bearer/);
    expect(config.auth.findPetsByStatus).toMatch(/^query \?api_key=/);
    expect(config.auth.getOrderById).toMatch(/^header authorization: Bearer/);
    expect(mock.every).toEqual([]);
  }, 60_000);
});
