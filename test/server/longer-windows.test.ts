import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { serveOptions } from '../../src/cli/command-options.ts';
import { resolveServeConfig, serverOptionsFromArgs } from '../../src/config/serve.ts';
import type { ServerOptions } from '../../src/server/index.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { inSimulatedTime, type SimulatedServer, simulatedServer } from '../helpers/simulated.ts';

/**
 * `serve --longer-windows sliding`: a plan's longer windows (below a day) are sliding logs too, as
 * frameworks keep several moving windows at once; and a token bucket under `--block`. The servers
 * are built from the command lines a user would type, with a --plans file, and answer in simulated
 * time with no latency, so that every instant below is exact.
 */

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-windows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plansFile(name: string, windows: { name: string; limit: number; seconds: number }[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ free: { windows } }));
  return path;
}
const MOVING = plansFile('moving.json', [
  { name: '10s', limit: 10, seconds: 10 },
  { name: '30s', limit: 20, seconds: 30 },
]);
const WITH_DAY = plansFile('with-day.json', [
  { name: '10s', limit: 10, seconds: 10 },
  { name: 'day', limit: 15, seconds: 86_400 },
]);
const BUCKET = plansFile('bucket.json', [{ name: '10s', limit: 10, seconds: 10 }]);

const servers: SimulatedServer[] = [];
/** `serve ARGV` in process; no ban: these tests knock while refused on purpose. */
async function serve(argv: string[]): Promise<SimulatedServer> {
  const args = await serveOptions(yargs([...argv, '--ban-after', '1000'])).parse();
  const options: ServerOptions = { ...serverOptionsFromArgs(args, {}), seedData: 3 };
  const s = await simulatedServer(options, 0);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const pets = (s: SimulatedServer) => call(s.url, '/pets?limit=1');
const retryAfter = (r: Reply) => Number(r.headers['retry-after']);
const until = (at: number) => sleep(Math.max(0, at - Date.now()));
async function statuses(s: SimulatedServer, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await pets(s)).status);
  return out;
}

/** 10 in 10 s spread 100 ms apart (a knock refused by the 10 s log after them), then 10 more at 11 s. */
async function fillBothWindows(s: SimulatedServer, t0: number): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await until(t0 + i * 100);
    expect((await pets(s)).status).toBe(200);
  }
  // Refused by the 10 s log: it must take no slot of the 30 s one, or the next ten would be nine.
  expect((await pets(s)).status).toBe(429);
  await until(t0 + 11_000);
  expect(await statuses(s, 10)).toEqual(Array(10).fill(200));
}

describe('--longer-windows sliding: 10 per 10 s and 20 per 30 s, both moving', () => {
  const argv = ['--plans', MOVING, '--limiter', 'sliding', '--longer-windows', 'sliding'];

  it('the 21st waits for the first to age out of the 30 s log, then one slot comes back per first-window request', () =>
    inSimulatedTime(async () => {
      const s = await serve(argv);
      const t0 = Date.now();
      await fillBothWindows(s, t0);
      // The 30 s log is full until the first request is 30 s old, although the 10 s one has room at 21 s.
      const full = await pets(s);
      expect(full.status).toBe(429);
      expect(retryAfter(full)).toBe(19);
      expect(full.headers['x-ratelimit-limit']).toBe('20');
      await until(t0 + 25_000);
      const stillFull = await pets(s);
      expect(stillFull.status).toBe(429);
      expect(retryAfter(stillFull)).toBe(5);
      // Then exactly one slot at each first-window request's 30th second, refused knocks taking none.
      for (let i = 0; i < 10; i++) {
        await until(t0 + 30_000 + i * 100);
        expect(await statuses(s, 2), `slot ${i}`).toEqual([200, 429]);
      }
      // The second ten still hold the 30 s log: nothing more until they are 30 s old.
      await until(t0 + 40_000);
      expect((await pets(s)).status).toBe(429);
      await until(t0 + 41_000);
      expect(await statuses(s, 11)).toEqual([...Array(10).fill(200), 429]);
    }));

  it('--count-refused: a refused request takes a slot in every log, the 30 s one included', () =>
    inSimulatedTime(async () => {
      const s = await serve([...argv, '--count-refused']);
      const t0 = Date.now();
      for (let i = 0; i < 10; i++) {
        await until(t0 + i * 100);
        expect((await pets(s)).status).toBe(200);
      }
      expect((await pets(s)).status).toBe(429);
      // The knock has aged out of the 10 s log, not of the 30 s one: nine are left of its twenty.
      await until(t0 + 11_000);
      expect(await statuses(s, 10)).toEqual([...Array(9).fill(200), 429]);
    }));

  it('with the longer window fixed (the default), its whole quota is back at once when it ends', () =>
    inSimulatedTime(async () => {
      const s = await serve(argv.slice(0, 4));
      const t0 = Date.now();
      await fillBothWindows(s, t0);
      await until(t0 + 30_000);
      // The 10 s log alone limits now: ten at once, where the moving window gave back one.
      expect(await statuses(s, 11)).toEqual([...Array(10).fill(200), 429]);
    }));

  it('--limiter fixed keeps the shortest window fixed and still moves the longer one', () =>
    inSimulatedTime(async () => {
      const s = await serve(['--plans', MOVING, '--longer-windows', 'sliding']);
      const t0 = Date.now();
      await fillBothWindows(s, t0);
      await until(t0 + 30_000);
      expect(await statuses(s, 2)).toEqual([200, 429]);
    }));

  it('the day stays a fixed window, at any time scale: its whole quota is back when it ends', () =>
    inSimulatedTime(async () => {
      // At time scale 60 the day lasts 1440 s; were it a log, only the first five would be back then.
      const s = await serve([
        '--plans',
        WITH_DAY,
        '--limiter',
        'sliding',
        '--longer-windows',
        'sliding',
        '--time-scale',
        '60',
      ]);
      const t0 = Date.now();
      expect(await statuses(s, 5)).toEqual(Array(5).fill(200));
      await until(t0 + 720_000);
      expect(await statuses(s, 11)).toEqual([...Array(10).fill(200), 429]);
      await until(t0 + 1_440_000);
      expect(await statuses(s, 11)).toEqual([...Array(10).fill(200), 429]);
    }));

  it('--quota-store is refused: the logs live in memory', async () => {
    const args = await serveOptions(
      yargs(['--longer-windows', 'sliding', '--quota-store', 'redis://127.0.0.1:6379']),
    ).parse();
    expect(() => resolveServeConfig(args, {})).toThrow(
      /^--longer-windows sliding keeps its state in memory: only fixed works with --quota-store$/,
    );
  });
});

describe('a token bucket with a block', () => {
  it('--limiter token-bucket --burst 10 on 10 per 10 s with --block 30s: blocked 30 s at the first excess, then the refill rate', () =>
    inSimulatedTime(async () => {
      const s = await serve([
        '--plans',
        BUCKET,
        '--limiter',
        'token-bucket',
        '--burst',
        '10',
        '--block',
        '30s',
      ]);
      const t0 = Date.now();
      expect(await statuses(s, 10)).toEqual(Array(10).fill(200));
      const excess = await pets(s);
      expect(excess.status).toBe(429);
      // The block, not the bucket's next token a second away.
      expect(retryAfter(excess)).toBe(30);
      await until(t0 + 15_000);
      const blocked = await pets(s);
      expect(blocked.status).toBe(429);
      expect(retryAfter(blocked)).toBe(15);
      // Refused requests took no token, so the bucket is full when the block ends; one a second after that.
      await until(t0 + 30_000);
      expect(await statuses(s, 10)).toEqual(Array(10).fill(200));
      for (let i = 1; i <= 5; i++) {
        await until(t0 + 30_000 + i * 1000);
        expect((await pets(s)).status, `second ${i}`).toBe(200);
      }
      // A second request within that second is an excess again: a new block of 30 s.
      const again = await pets(s);
      expect(again.status).toBe(429);
      expect(retryAfter(again)).toBe(30);
    }));
});
