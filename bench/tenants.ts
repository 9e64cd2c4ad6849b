/**
 * bench:tenants: does the cost of a run grow with the number of keys it drives? One aggregate rate
 * (BENCH_RATE, 2,000 req/s) spread over 1, 100, 1,000 and 10,000 tenant keys of a plan whose quota
 * never binds, each in a child process of its own (so that its peak RSS is its own), beside a bare
 * undici dispatch loop paced the same way (the floor: nothing of ours). Rounds rotate the order; the
 * medians of CPU per request once every key has sent (steadyMs), and their ratios, are the figures
 * to quote, with those from the warm-up on (BENCH_WARMUP_MS, first pass included) beside them. The
 * reference server runs in its own process, pinned apart from the children where taskset can, and
 * mints the keys from a seed both sides get through the environment.
 *
 * BENCH_CANNED=1 adds two configs that send nothing: the same pipeline over the most keys, its
 * responses canned (a copy of the reference server's, no socket), at the same rate and at ten times
 * it. They split the gap to the bare loop into the pipeline's own cost and how much dearer each
 * request is when a run wakes for only one or two at a time.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Dispatcher, Pool } from 'undici';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan } from '../src/api/plans.ts';
import { loadSpec } from '../src/api/spec.ts';
import { buildTenantMix, mintedKey, TENANT_SEED_ENV } from '../src/api/tenants.ts';
import { type ServerProcess, spawnServer } from '../src/cli/embedded-server.ts';
import { exitWithParent } from '../src/cli/tied-child.ts';
import type { RawResponse } from '../src/client/transport.ts';
import { writeFileAtomic } from '../src/io/atomic-write.ts';
import { executeScenario } from '../src/scenario/execute.ts';
import { tenantLoads } from '../src/scenario/tenant-load.ts';
import { resolveWorkload } from '../src/scenario/workload.ts';
import { forkReport, stopOnExit } from './harness.ts';
import { median, writeBenchReport } from './report.ts';

const rate = Number(process.env.BENCH_RATE ?? 2000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * CPU is counted from this far into each run: the first seconds load modules and compile the
 * checks' schemas lazily, a start-up cost the bare loop has none of and that would be charged to
 * every request of a short run.
 */
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 2000);
const keyCounts = (process.env.BENCH_KEYS ?? '1,100,1000,10000').split(',').map(Number);
const MAX_KEYS = Math.max(...keyCounts);
/**
 * The steady cost per request is counted from here: once every key has sent once (10,000 keys at
 * 2,000 req/s take 5 s), and a second more. A key's first request makes its state (its pacing, its
 * checks' records), a cost paid once per key, like its memory, where every later request costs the
 * same whatever the number of keys; a short run would charge it to a share of the requests that
 * depends on the run's length. The figures from the warm-up on, first pass included, are kept too.
 */
const steadyMs = Math.max(warmupMs, Math.ceil((MAX_KEYS / rate) * 1000) + 1000);
const duration = Number(process.env.BENCH_DURATION ?? Math.max(10, Math.ceil(steadyMs / 1000) + 8));
const MAX_IN_FLIGHT = 50;
/** A quota of 5,000 a second per key: 1 key at 2,000 req/s never meets it, nor do 10,000 at 0.2. */
const PLANS = { bench: { windows: [{ name: 'second', limit: 5000, seconds: 1 }] } };

interface ChildReport {
  what: string;
  requests: number;
  non2xx: number;
  /** Iterations not started: the key had MAX_IN_FLIGHT requests unanswered. */
  dropped: number;
  cpuMs: number;
  /** From `steadyMs` on: every key has sent once. */
  usPerRequest: number;
  /** From the warm-up on, every key's first request among them. */
  usPerRequestFirstPass: number;
  /** Of which in the kernel (sockets, timers): what a request costs beyond the JavaScript. */
  sysUsPerRequest: number;
  rps: number;
  rssBeforeMb: number;
  peakRssMb: number;
  /** Times the process gave up the CPU per request (voluntary context switches): how often it wakes. */
  wakeupsPerRequest: number;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const sysMs = () => process.cpuUsage().system / 1000;
const switches = () => process.resourceUsage().voluntaryContextSwitches;

interface Mark {
  cpu: number;
  sys: number;
  switches: number;
  requests: number;
}

/**
 * The costs a child counts, from two marks of its run (the warm-up's end and the steady state's
 * start) to its end: both children count alike.
 */
class Meter {
  private first: Mark | undefined;
  private steady: Mark | undefined;
  /** Its requests are given to `figures`: a run's count is known only once it has ended. */
  private end: Omit<Mark, 'requests'> | undefined;

  /** At `elapsedMs` into the run, with `requests` answered so far. */
  tick(elapsedMs: number, requests: number): void {
    if (this.first === undefined && elapsedMs >= warmupMs) this.first = mark(requests);
    if (this.steady === undefined && elapsedMs >= steadyMs) this.steady = mark(requests);
  }

  /** At the workload's end: what comes after (the result, the pool's close) is not a request's. */
  stop(): void {
    this.end = mark(Number.NaN);
  }

  /** The report's figures, `requests` answered in all (a run too short for a mark counts from its start). */
  figures(
    requests: number,
  ): Pick<
    ChildReport,
    'cpuMs' | 'usPerRequest' | 'usPerRequestFirstPass' | 'sysUsPerRequest' | 'wakeupsPerRequest'
  > {
    const zero: Mark = { cpu: 0, sys: 0, switches: 0, requests: 0 };
    const end: Mark = { ...(this.end ?? mark(requests)), requests };
    const from = this.steady ?? this.first ?? zero;
    const n = end.requests - from.requests;
    const first = this.first ?? zero;
    return {
      cpuMs: end.cpu - from.cpu,
      usPerRequest: ((end.cpu - from.cpu) * 1000) / n,
      usPerRequestFirstPass: ((end.cpu - first.cpu) * 1000) / (end.requests - first.requests),
      sysUsPerRequest: ((end.sys - from.sys) * 1000) / n,
      wakeupsPerRequest: (end.switches - from.switches) / n,
    };
  }
}

function mark(requests: number): Mark {
  return { cpu: cpuMs(), sys: sysMs(), switches: switches(), requests };
}

/**
 * A transport that answers every request with a copy of one real response of the server (its
 * Remaining as it was, its Reset moved on with the clock), on the next turn of the event loop.
 */
async function cannedTransport(url: string, seed: string): Promise<() => Promise<RawResponse>> {
  const pool = new Pool(url);
  const first = await pool.request({
    path: '/pets/1',
    method: 'GET',
    headers: { authorization: `Bearer ${mintedKey(seed, 'bench', 1)}`, accept: 'application/json' },
  });
  const text = await first.body.text();
  await pool.close();
  const headers = first.headers as IncomingHttpHeaders;
  const status = first.statusCode;
  return () =>
    new Promise((resolve) =>
      setImmediate(() =>
        resolve({
          status,
          headers: { ...headers, 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000)) },
          text,
        }),
      ),
    );
}

/**
 * `run`'s pipeline (client lanes, pacing, recorder, every check) over `keys` tenant keys at `rate`;
 * with `canned`, the requests go nowhere (cannedTransport).
 */
async function tenantsChild(
  url: string,
  seed: string,
  keys: number,
  rate: number,
  canned = false,
): Promise<ChildReport> {
  const plans = applyPlanOverrides(DEFAULT_PLANS, PLANS);
  const windows = getPlan(plans, 'bench').windows;
  const { operations } = await loadSpec();
  const declared = {
    executor: 'constant-arrival-rate' as const,
    rate: rate / keys,
    duration: `${duration}s`,
    // Per key. One key at 2,000 req/s meets it when the server stalls for 25 ms (its collections)
    // and drops iterations (counted in the round's line); a higher bound would let that key hold
    // hundreds of requests at once, and its peak RSS, the base the RSS bound is judged from, with them.
    maxInFlight: MAX_IN_FLIGHT,
  };
  const mix = buildTenantMix(
    [{ plan: 'bench', keys }],
    () => windows,
    (plan, n) => mintedKey(seed, plan, n),
  );
  const workload = resolveWorkload(declared, rate, {});
  const rssBeforeMb = process.resourceUsage().maxRSS / 1024;
  const meter = new Meter();
  const result = await executeScenario({
    scenario: {
      name: 'bench-tenants',
      workload: declared,
      flows: [{ name: 'get-pet', run: async (api) => void (await api.getPetById(1)) }],
    },
    workload: { ...workload, maxInFlight: MAX_IN_FLIGHT },
    baseUrl: url,
    target: url,
    embeddedTarget: true,
    apiKey: undefined,
    operations,
    plan: 'bench',
    windows,
    timeScale: 1,
    enforce: true,
    spec: 'built in',
    ...(canned ? { transport: await cannedTransport(url, seed) } : {}),
    tenants: { mix, loads: tenantLoads(mix, declared, {}, 'open') },
    onTick: (tick) => meter.tick(tick.elapsedMs, tick.requests),
    onWorkload: (running) => {
      if (!running) meter.stop();
    },
  });
  const requests = result.overall.requests;
  return {
    what: canned ? `canned ${rate}/s` : `${keys} keys`,
    requests,
    non2xx: requests - (result.overall.statuses['200'] ?? 0),
    dropped: result.workload.droppedIterations,
    ...meter.figures(requests),
    rps: requests / result.meta.durationSeconds,
    rssBeforeMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** The floor: undici's dispatch at the same rate, one key, no pacing, no recording, no checks. */
async function bareChild(url: string, seed: string): Promise<ChildReport> {
  const pool = new Pool(url, { connections: 50 });
  const headers = { authorization: `Bearer ${mintedKey(seed, 'bench', 1)}`, accept: 'application/json' };
  const rssBeforeMb = process.resourceUsage().maxRSS / 1024;
  let requests = 0;
  let ok = 0;
  const inFlight = new Set<Promise<void>>();
  const get = () =>
    new Promise<void>((resolve) => {
      let status = 0;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: () => {},
        onResponseStart: (_c: Dispatcher.DispatchController, s: number, _h: IncomingHttpHeaders) => {
          status = s;
        },
        onResponseData: () => {},
        onResponseEnd: () => {
          requests++;
          if (status === 200) ok++;
          resolve();
        },
        onResponseError: () => {
          requests++;
          resolve();
        },
      };
      pool.dispatch({ path: '/pets/1', method: 'GET', headers }, handler);
    });
  const start = performance.now();
  const meter = new Meter();
  // Paced as the open model is: every request due by now starts, one timer wake-up at a time.
  let sent = 0;
  while (performance.now() - start < duration * 1000) {
    meter.tick(performance.now() - start, requests);
    const due = Math.floor(((performance.now() - start) * rate) / 1000);
    while (sent < due) {
      sent++;
      const p = get();
      inFlight.add(p);
      p.finally(() => inFlight.delete(p));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  meter.stop();
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  return {
    what: 'bare undici',
    requests,
    non2xx: requests - ok,
    dropped: 0,
    ...meter.figures(requests),
    rps: requests / seconds,
    rssBeforeMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** What a child runs: the bare loop, `run` over that many keys, or `run` with canned responses at a rate. */
type Config = number | 'bare' | `canned@${number}`;

function runChild(url: string, seed: string, what: Config): Promise<ChildReport> {
  return forkReport<ChildReport>(
    fileURLToPath(import.meta.url),
    ['--child', url, String(what)],
    `for ${what}`,
    {
      env: { ...process.env, [TENANT_SEED_ENV]: seed },
      // BENCH_NODE_FLAGS (e.g. '--cpu-prof --cpu-prof-dir=DIR', '--trace-gc') go to every child: to
      // see where a request's cost goes, or what a V8 setting changes.
      execArgv: [...process.execArgv, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    },
  );
}

/**
 * Unless BENCH_PIN=0, the server runs on the first CPU and each child on the last, every thread of
 * each, where taskset can place them: the scheduler then never runs a child beside the server on
 * one core for a while and apart for another, which moved a config's CPU per request by a third
 * from one round to the next (its kernel time most). Every config gets the same placement. The
 * parent decides and tells its children the CPU (CHILD_CPU_ENV); a placement refused leaves the
 * run as the scheduler has it, said in the heading.
 */
const CHILD_CPU_ENV = 'BENCH_TENANTS_CHILD_CPU';

/** Every thread of `pid` on `cpu` (the threads a process starts later inherit it); false when refused. */
function pinTo(pid: number, cpu: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (process.argv[2] === '--child') {
  exitWithParent();
  const [url, what] = process.argv.slice(3) as [string, string];
  const cpu = process.env[CHILD_CPU_ENV];
  if (cpu) pinTo(process.pid, cpu);
  const seed = process.env[TENANT_SEED_ENV] as string;
  const report =
    what === 'bare'
      ? await bareChild(url, seed)
      : what.startsWith('canned@')
        ? await tenantsChild(url, seed, MAX_KEYS, Number(what.slice('canned@'.length)), true)
        : await tenantsChild(url, seed, Number(what), rate);
  process.send?.(report);
  process.exit(0);
}

const seed = randomBytes(16).toString('hex');
const plansFile = `${fileURLToPath(new URL('../reports/', import.meta.url))}bench-tenants-plans.json`;
writeFileAtomic(plansFile, JSON.stringify(PLANS));
const servers: ServerProcess[] = [];
const stopServers = stopOnExit(servers);
const canned: Config[] = process.env.BENCH_CANNED === '1' ? [`canned@${rate}`, `canned@${rate * 10}`] : [];
const configs: Config[] = ['bare', ...keyCounts, ...canned];
const samples = new Map<Config, ChildReport[]>(configs.map((c) => [c, []]));
try {
  const server = await spawnServer(['--plans', plansFile, '--tenant-keys', `bench=${MAX_KEYS}`], {
    [TENANT_SEED_ENV]: seed,
  });
  servers.push(server);
  const lastCpu = String(availableParallelism() - 1);
  // The parent tries the child's CPU on itself first, then settles on the server's with it.
  const pinned =
    process.env.BENCH_PIN !== '0' &&
    availableParallelism() >= 2 &&
    pinTo(process.pid, lastCpu) &&
    pinTo(server.child.pid as number, '0') &&
    pinTo(process.pid, '0');
  if (pinned) process.env[CHILD_CPU_ENV] = lastCpu;
  console.log(
    `${rate} req/s for ${duration} s over ${keyCounts.join(', ')} keys and a bare undici dispatch loop, ${rounds} rounds in rotating order, each in a child process${pinned ? ` on CPU ${lastCpu}, the server on CPU 0` : ' (not pinned to CPUs)'}; CPU counted from ${steadyMs / 1000} s (every key has sent once), and from ${warmupMs / 1000} s (first pass)`,
  );
  for (let round = 0; round < rounds; round++) {
    const order = configs.map((_, i) => configs[(i + round) % configs.length] as Config);
    for (const c of order) {
      const r = await runChild(server.url, seed, c);
      samples.get(c)?.push(r);
      console.log(
        `  round ${round + 1} ${r.what.padEnd(12)}: ${r.requests} requests (${r.non2xx} not 200, ${r.dropped} iterations dropped), ${r.rps.toFixed(0)} req/s, ${r.usPerRequest.toFixed(1)} µs CPU per request (${r.sysUsPerRequest.toFixed(1)} in the kernel; ${r.usPerRequestFirstPass.toFixed(1)} with the first pass), ${r.wakeupsPerRequest.toFixed(2)} wake-ups per request, peak RSS ${r.peakRssMb.toFixed(1)} MB`,
      );
    }
  }
} finally {
  await stopServers();
  rmSync(plansFile, { force: true });
}

const figures = configs.map((c) => {
  const list = samples.get(c) as ChildReport[];
  return {
    config: c === 'bare' ? 'bare undici' : typeof c === 'number' ? `${c} keys` : c.replace('@', ' '),
    keys: typeof c === 'number' ? c : c === 'bare' ? 0 : MAX_KEYS,
    canned: typeof c === 'string' && c !== 'bare',
    usPerRequest: median(list.map((r) => r.usPerRequest)),
    usPerRequestFirstPass: median(list.map((r) => r.usPerRequestFirstPass)),
    sysUsPerRequest: median(list.map((r) => r.sysUsPerRequest)),
    wakeupsPerRequest: median(list.map((r) => r.wakeupsPerRequest)),
    peakRssMb: median(list.map((r) => r.peakRssMb)),
    rps: median(list.map((r) => r.rps)),
    non2xx: list.reduce((n, r) => n + r.non2xx, 0),
  };
});
const bare = figures[0] as (typeof figures)[number];
const one = figures.find((f) => !f.canned && f.keys === Math.min(...keyCounts)) as (typeof figures)[number];
const most = figures.find((f) => !f.canned && f.keys === MAX_KEYS) as (typeof figures)[number];
console.log('');
console.log(
  `${'config'.padEnd(12)} ${'µs CPU/req'.padStart(11)} ${'/ 1 key'.padStart(8)} ${'/ bare'.padStart(8)} ${'first pass'.padStart(11)} ${'/ bare'.padStart(8)} ${'peak RSS'.padStart(10)} ${'req/s'.padStart(7)}`,
);
for (const f of figures)
  console.log(
    `${f.config.padEnd(12)} ${f.usPerRequest.toFixed(1).padStart(11)} ${(f.usPerRequest / one.usPerRequest).toFixed(2).padStart(8)} ${(f.usPerRequest / bare.usPerRequest).toFixed(2).padStart(8)} ${f.usPerRequestFirstPass.toFixed(1).padStart(11)} ${(f.usPerRequestFirstPass / bare.usPerRequestFirstPass).toFixed(2).padStart(8)} ${`${f.peakRssMb.toFixed(1)} MB`.padStart(10)} ${f.rps.toFixed(0).padStart(7)}`,
  );
const yes = (met: boolean) => (met ? 'met' : 'NOT MET');
const perKeyRatio = most.usPerRequest / one.usPerRequest;
const bareRatio = most.usPerRequest / bare.usPerRequest;
const rssGrowth = most.peakRssMb - one.peakRssMb;
const firstPassPerKeyRatio = most.usPerRequestFirstPass / one.usPerRequestFirstPass;
const firstPassBareRatio = most.usPerRequestFirstPass / bare.usPerRequestFirstPass;
console.log(
  `CPU per request at ${MAX_KEYS} keys / 1 key: ${perKeyRatio.toFixed(2)}x (at most 1.1x): ${yes(perKeyRatio <= 1.1)}`,
);
console.log(
  `CPU per request at ${MAX_KEYS} keys / bare undici: ${bareRatio.toFixed(2)}x (at most 1.3x): ${yes(bareRatio <= 1.3)}`,
);
console.log(
  `with the first pass (each key's first request makes its state): ${firstPassPerKeyRatio.toFixed(2)}x 1 key, ${firstPassBareRatio.toFixed(2)}x bare undici`,
);
console.log(
  `peak RSS at ${MAX_KEYS} keys - 1 key: ${rssGrowth.toFixed(1)} MB, ${((rssGrowth * 1024 * 1024) / MAX_KEYS).toFixed(0)} bytes per key (at most 20 MB): ${yes(rssGrowth <= 20)}`,
);
const [slow, fast] = figures.filter((f) => f.canned);
if (slow && fast)
  console.log(
    `the pipeline alone (canned responses, ${MAX_KEYS} keys): ${slow.usPerRequest.toFixed(1)} µs per request at ${rate} req/s, ${fast.usPerRequest.toFixed(1)} at ${rate * 10} req/s (${(slow.usPerRequest / fast.usPerRequest).toFixed(1)}x)`,
  );
const path = writeBenchReport('tenants', {
  rate,
  duration,
  rounds,
  warmupMs,
  steadyMs,
  figures,
  perKeyRatio,
  bareRatio,
  firstPassPerKeyRatio,
  firstPassBareRatio,
  rssGrowthMb: rssGrowth,
  ...(slow && fast ? { cannedSlowOverFast: slow.usPerRequest / fast.usPerRequest } : {}),
});
console.log(`figures: ${path}`);
