import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import {
  type Cli,
  cliWorkspace,
  killAllClis,
  readJson,
  spawnCli,
  withTimeout,
} from '../helpers/integration-cli.ts';
import { type Hosts, makeHosts } from '../helpers/netns.ts';

/**
 * A fleet on hosts of its own: three generators, the store (redis-server) and the target (the
 * reference server, and a slow one at a second address) each in a network namespace, on one bridge.
 * The target is named `petstore.fleet` in each generator's /etc/hosts: one URL for the fleet, and a
 * generator whose name leads to the slow server has a slow path, as a far region would.
 */
let hosts: Hosts;
const started: ChildProcess[] = [];
const workspace = cliWorkspace('fleet-netns');
const PORT = 8080;

function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve, reject) => {
      let seen = '';
      const look = (chunk: Buffer) => {
        seen += chunk;
        if (pattern.test(seen)) resolve();
      };
      child.stdout?.on('data', look);
      child.stderr?.on('data', look);
      child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${seen}`)));
    }),
    20_000,
    what,
  );
}

beforeAll(async () => {
  hosts = makeHosts({ g1: 1, g2: 1, g3: 1, store: 1, target: 2 });
  const [ip, ...within] = hosts.within('store');
  const redis = spawn(
    ip as string,
    [
      ...within,
      ...['redis-server', '--bind', hosts.address('store'), '--port', '6379', '--save', ''],
      ...['--appendonly', 'no', '--protected-mode', 'no'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  started.push(redis);
  const serve = (k: number, extra: string[]) => {
    const server = spawnCli(
      ['serve', '--host', hosts.address('target', k), '--port', String(PORT), '--time-scale', '10', ...extra],
      {},
      hosts.within('target'),
    );
    return waitFor(server.child, /listening on/, `the reference server at ${hosts.address('target', k)}`);
  };
  await Promise.all([
    waitFor(redis, /Ready to accept connections/, 'redis-server'),
    serve(0, []),
    serve(1, ['--fault-latency', '300ms']),
  ]);
}, 30_000);

afterAll(() => {
  killAllClis();
  for (const child of started) child.kill('SIGKILL');
  hosts?.remove();
});

/** Generator `i` in its namespace, the target's name leading it to the fast server or the slow one. */
function generator(i: number, fleet: string, out: string, extra: string[], slow = false): Cli {
  hosts.names(`g${i}`, { 'petstore.fleet': hosts.address('target', slow ? 1 : 0) });
  const args = [
    ...['run', 'catalogue-browse', '--base-url', `http://petstore.fleet:${PORT}`],
    ...['--plan', 'pro', '--api-key', 'pro-demo-key', '--time-scale', '10', '--rate', '15'],
    ...['--quota-store', `redis://${hosts.address('store')}:6379`, '--fleet', fleet, '--generators', '3'],
    ...['--out', join(out, `g${i}`), ...extra],
  ];
  return spawnCli(args, {}, hosts.within(`g${i}`));
}

async function fleetOf(fleet: string, extra: string[], o: { apartMs: number; slow?: number }) {
  const out = workspace.fresh(fleet);
  const clis: Cli[] = [];
  for (let i = 1; i <= 3; i++) {
    clis.push(generator(i, fleet, out, extra, o.slow === i));
    if (i < 3) await new Promise((resolve) => setTimeout(resolve, o.apartMs));
  }
  return { out, clis };
}

/** Until the generator says when the fleet starts (1.5 s ahead). */
const toldStart = (cli: Cli) =>
  withTimeout(
    (async () => {
      while (!cli.stderr().includes('the fleet starts in')) await new Promise((r) => setTimeout(r, 50));
    })(),
    30_000,
    'the fleet to start',
  );
const ended = (clis: Cli[]) => withTimeout(Promise.all(clis.map((c) => c.exited)), 60_000, 'the fleet');
const told = (clis: Cli[]) =>
  clis.map((c, i) => `generator ${i + 1}:\n${c.stdout()}\n${c.stderr()}`).join('\n');
/** The shard generator `i` (1-based, in the order started) claimed, as it said. */
function claimed(clis: Cli[], i: number): number {
  return Number(/generator (\d) of 3 joined/.exec(clis[i - 1]?.stderr() ?? '')?.[1]);
}
/** Shard `k`'s own result, from the directory of the generator that claimed it. */
function shardOf(out: string, clis: Cli[], k: number): RunResult {
  const i = [1, 2, 3].find((g) => claimed(clis, g) === k);
  return readJson(join(out, `g${i}`, `shard-${k}`, 'result.json')) as RunResult;
}
const count = (r: RunResult, op: string) =>
  (r.operations as Record<string, { requests: number }>)[op]?.requests ?? 0;

/** The fleet's result, and which generators wrote one (exactly one should). */
function fleetResult(out: string, among: number[]): { writers: number[]; result: RunResult } {
  const writers = among.filter((i) => existsSync(join(out, `g${i}`, 'result.json')));
  return { writers, result: readJson(join(out, `g${writers[0]}`, 'result.json')) as RunResult };
}

describe('a fleet of three generators, each on a host of its own', () => {
  it('starts as one, outlasts a 3 s cut from the store, and goes on without a generator killed outright', async () => {
    const { out, clis } = await fleetOf('apart', ['--duration', '5s'], { apartMs: 700 });
    const [g2, g3] = [clis[1] as Cli, clis[2] as Cli];
    await toldStart(g3);
    // Half a second into the workload generator 3 loses the store for 3 s; generator 2 is killed
    // two seconds in, while 3 is away (its checkpoints, one a second, have counted some of its load).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    hosts.cut('g3', hosts.address('store'), true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    g2.child.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    hosts.cut('g3', hosts.address('store'), false);
    const codes = (await ended(clis)).map((e) => e.code);
    const why = told(clis);
    // The fleet lacks a third of its load: every generator left says so, exit 3.
    expect(codes, why).toEqual([3, null, 3]);
    const k = claimed(clis, 2);
    const { writers, result } = fleetResult(out, [1, 3]);
    expect(writers).toHaveLength(1);
    expect(existsSync(join(out, `g${writers[0]}`, 'report.html'))).toBe(true);
    expect(result.meta.fleet).toMatchObject({ name: 'apart', generators: 3, lost: [k] });
    const shards = result.meta.fleet?.shards ?? [];
    // One start: the workloads began within 250 ms of one another, though started 1.4 s apart.
    const starts = shards.map((s) => Date.parse(s.startedAt ?? ''));
    expect(Math.max(...starts) - Math.min(...starts), why).toBeLessThanOrEqual(250);
    expect(result.overall.rateLimited).toBe(0);
    // Setup (3 pets created) once, teardown (3 deleted) once, by the generators left.
    expect([count(result, 'createPet'), count(result, 'deletePet')]).toEqual([3, 3]);
    // Generator 3 met the cut, waited it out and was not counted lost.
    const cut = claimed(clis, 3);
    expect(shards[cut - 1]?.state).toBe('finished');
    // Recorded as the cut was: from its first unanswered call (within its first second) to its end.
    const [outage] = shardOf(out, clis, cut).compliance.storeOutages ?? [];
    expect((outage?.to ?? 0) - (outage?.from ?? 0), why).toBeGreaterThanOrEqual(2);
    // The killed one is named, partial, and what its last checkpoint held is counted.
    const lost = shards[k - 1];
    expect(lost?.state).toBe('lost');
    expect(lost?.requests, why).toBeGreaterThan(0);
    expect(result.meta.partial).toBe(true);
    const kept = [1, 2, 3].filter((j) => j !== k).map((j) => shardOf(out, clis, j).overall.requests);
    expect(result.overall.requests).toBe((kept[0] ?? 0) + (kept[1] ?? 0) + (lost?.requests ?? 0));
    expect(result.meta.interruptedBy).toContain(`generator ${k} of 3`);
    for (const i of [0, 2]) {
      expect(clis[i]?.stderr()).toContain(`generator ${k} of 3 (`);
      expect(clis[i]?.stdout()).toContain('fleet apart of 3 generators');
    }
    // Fetched afterwards by a fourth process: the same result the first to merge wrote.
    const store = `redis://${hosts.address('store')}:6379`;
    const fetched = spawnCli(
      ['merge', '--fleet', `${store}/apart`, '-o', join(out, 'fetched')],
      {},
      hosts.within('g1'),
    );
    expect((await withTimeout(fetched.exited, 20_000, 'merge --fleet')).code, fetched.stderr()).toBe(0);
    expect(readJson(join(out, 'fetched', 'result.json'))).toEqual(result);
  }, 90_000);

  it("stops every generator within 2 s of a p99 breach on the fleet's totals, and every one exits 1", async () => {
    // Generator 1's path is slow (300 ms): a third of the requests, enough for the fleet's p99. The
    // others' own p99 is their pacing's and the fast server's (under 100 ms): judged alone, they
    // would run the whole 30 s; the fleet's breach stops them too.
    const threshold = ['--threshold', 'p99<200ms', '--abort-on-fail', '--duration', '30s'];
    const { out, clis } = await fleetOf('breach', threshold, { apartMs: 200, slow: 1 });
    const codes = (await ended(clis)).map((e) => e.code);
    const why = told(clis);
    expect(codes, why).toEqual([1, 1, 1]);
    const shards = [1, 2, 3].map((k) => shardOf(out, clis, k));
    const ends = shards.map((r) => Date.parse(r.meta.endedAt));
    expect(Math.max(...ends) - Math.min(...ends), why).toBeLessThanOrEqual(2000);
    expect(Math.max(...shards.map((r) => r.meta.durationSeconds))).toBeLessThan(15);
    const { result } = fleetResult(out, [1, 2, 3]);
    expect(result.thresholds?.[0]).toMatchObject({ passed: false, aborted: true });
    expect(result.meta.fleet?.lost).toEqual([]);
  }, 90_000);
});
