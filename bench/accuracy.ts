/**
 * bench:accuracy: does `run` report the latency the target really has? Two known truths, each made by
 * the reference server's faults (in its own process, enterprise key with limits that never bind):
 *
 * a. A fixed added latency (`--fault-latency 50ms`) on getPetById at a constant arrival rate: the
 *    response-time p50 should be 50 ms + the server's own base latency, measured by the same run
 *    against a server without the fault, in alternating rounds (the machine is shared: medians).
 * b. A 1 s stall every 10 s (`--fault-stall 1s/10s`) at a constant arrival rate: the true response
 *    time of each request runs from its intended send time, and one due during a stall waits until
 *    the stall ends. The stall windows are inferred from the run's own send and receive times (the
 *    server does not say when it started), the schedule is simulated against them, and its p99 is
 *    compared with the p99 `run` reports. autocannon, closed loop, against the same server shows
 *    what a tool without the coordinated-omission correction reports instead.
 */
import autocannon from 'autocannon';
import { loadSpec } from '../src/api/spec.ts';
import { type ServerProcess, spawnServer } from '../src/cli/embedded-server.ts';
import type { RunResult } from '../src/result/types.ts';
import type { Flow } from '../src/scenario/define.ts';
import { runFlow, runFlowObserved, stopOnExit, unlimitedPlansFile } from './harness.ts';
import { median, writeBenchReport } from './report.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** Part a: seconds per run, per side and round. */
const duration = Number(process.env.BENCH_DURATION ?? 10);
const rate = Number(process.env.BENCH_RATE ?? 200);
/** Part b: one run of `run` and one of autocannon, each this long (seconds). */
const stallDuration = Number(process.env.BENCH_STALL_DURATION ?? 30);
const stallRate = Number(process.env.BENCH_STALL_RATE ?? 200);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

const ADDED_LATENCY_MS = 50;
const STALL = { forMs: 1000, everyMs: 10_000 };
const P50_TOLERANCE_MS = 2;
const P99_TOLERANCE = 0.1;

const { path: plansPath, plans } = unlimitedPlansFile();
const { operations } = await loadSpec();
const flow: Flow<undefined> = { name: 'get-pet', run: async (api) => void (await api.getPetById(1)) };
const headers = { authorization: 'Bearer enterprise-demo-key' };

const servers: ServerProcess[] = [];
const stopServers = stopOnExit(servers);
async function server(args: string[]): Promise<ServerProcess> {
  const s = await spawnServer(['--plans', plansPath, ...args]);
  servers.push(s);
  return s;
}

function openRun(url: string, seconds: number, perSecond: number, maxInFlight = 100): Promise<RunResult> {
  return runFlow({
    url,
    plan: 'enterprise',
    plans,
    operations,
    workload: { executor: 'constant-arrival-rate', rate: perSecond, duration: `${seconds}s`, maxInFlight },
    flow,
  });
}

/** Nearest-rank percentile of values sorted ascending. */
function percentile(sorted: Float64Array | number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

const yes = (met: boolean) => (met ? 'met' : 'NOT MET');
const f = (ms: number, digits = 2) => `${ms.toFixed(digits)} ms`;

type LatencySample = {
  p50: number;
  p99: number;
  serviceP50: number;
  requests: number;
  dropped: number;
  non2xx: number;
};
const sampleOf = (r: RunResult): LatencySample => ({
  p50: r.overall.response.p50,
  p99: r.overall.response.p99,
  serviceP50: r.overall.service.p50,
  requests: r.overall.requests,
  dropped: r.workload.droppedIterations,
  non2xx: Object.entries(r.overall.statuses)
    .filter(([status]) => status !== '200')
    .reduce((n, [, count]) => n + count, 0),
});

try {
  // ---- a. fixed added latency ---------------------------------------------------------------
  const sides = {
    base: await server([]),
    latency: await server(['--fault-latency', `${ADDED_LATENCY_MS}ms`]),
  };
  type Side = keyof typeof sides;
  const samples: Record<Side, LatencySample[]> = { base: [], latency: [] };
  console.log(
    `a. getPetById at ${rate} req/s (open model), ${rounds} rounds of ${duration} s per side, after a warm-up run each`,
  );
  for (const side of ['base', 'latency'] as const) await openRun(sides[side].url, 2, rate);
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first so that drift in machine load does not favour one.
    const order: Side[] = round % 2 ? ['latency', 'base'] : ['base', 'latency'];
    for (const side of order) {
      const s = sampleOf(await openRun(sides[side].url, duration, rate));
      samples[side].push(s);
      console.log(
        `  round ${round + 1} ${side.padEnd(7)}: ${s.requests} requests, response p50 ${f(s.p50)} (service ${f(s.serviceP50)}), p99 ${f(s.p99)}, dropped ${s.dropped}, non-2xx ${s.non2xx}`,
      );
    }
  }
  await Promise.all([sides.base.stop(), sides.latency.stop()]);
  const baseP50 = median(samples.base.map((s) => s.p50));
  const measuredP50 = median(samples.latency.map((s) => s.p50));
  const truthP50 = ADDED_LATENCY_MS + baseP50;
  const p50Difference = measuredP50 - truthP50;
  // Paired per round as well: each round's two runs ran back to back under the same machine load.
  const pairedDifferences = samples.latency.map(
    (s, i) => s.p50 - ADDED_LATENCY_MS - (samples.base[i] as LatencySample).p50,
  );
  const serviceDifference =
    median(samples.latency.map((s) => s.serviceP50)) - median(samples.base.map((s) => s.serviceP50));

  // ---- b. periodic stall ----------------------------------------------------------------------
  const stalled = await server(['--fault-stall', `${STALL.forMs}ms/${STALL.everyMs}ms`]);
  console.log(
    `\nb. ${STALL.forMs} ms stall every ${STALL.everyMs} ms; run at ${stallRate} req/s for ${stallDuration} s, then autocannon (${connections} connections) as long`,
  );
  // Due, sent and received times of every first attempt (retries are measured from their own send).
  const attempts: { due: number; sent: number; received: number }[] = [];
  // The open model must never drop: a stall holds rate x stall requests in flight.
  const maxInFlight = Math.ceil(stallRate * (STALL.forMs / 1000) * 3) + 100;
  const stallResult = await runFlowObserved({
    url: stalled.url,
    plan: 'enterprise',
    plans,
    operations,
    workload: {
      executor: 'constant-arrival-rate',
      rate: stallRate,
      duration: `${stallDuration}s`,
      maxInFlight,
    },
    flow,
    tap: (a) => {
      if (a.attempt === 1 && a.scheduledAt !== undefined)
        attempts.push({ due: a.scheduledAt, sent: a.sentAt, received: a.receivedAt });
    },
  });
  const runP99 = stallResult.overall.response.p99;
  const runServiceP99 = stallResult.overall.service.p99;

  // The stall windows, from the run's own timeline: every request that reached the server during a
  // stall is answered as it ends, so the earliest answer of a cluster of long waits, less the base
  // service time, is that stall's end. The server's stalls are periodic from its start: one phase.
  const longWaits = attempts.filter((a) => a.received - a.sent > STALL.forMs / 4);
  const quick = attempts.filter((a) => a.received - a.sent <= STALL.forMs / 4);
  const baseService = median(quick.map((a) => a.received - a.sent));
  const stallEnds: number[] = [];
  let clusterStart = Number.NEGATIVE_INFINITY;
  for (const a of [...longWaits].sort((x, y) => x.received - y.received)) {
    if (a.received - clusterStart > STALL.everyMs / 2) {
      clusterStart = a.received;
      stallEnds.push(a.received - baseService);
    }
  }
  if (stallEnds.length === 0) throw new Error('no stall seen in the run: cannot infer the stall windows');
  // What the simulation leaves out: the requests a stall held are all released at its end, and the
  // server and the generator answer them one after the other. How long after the end each arrived.
  const drain = longWaits
    .map((a) => a.received - Math.max(...stallEnds.filter((e) => e <= a.received)))
    .sort((x, y) => x - y);
  const phases = stallEnds.map((e) => ((e % STALL.everyMs) + STALL.everyMs) % STALL.everyMs);
  // Phases close to 0 and to everyMs are the same phase: measure them around the first one.
  const ref = phases[0] as number;
  const offsets = phases.map((p) => ((p - ref + 1.5 * STALL.everyMs) % STALL.everyMs) - STALL.everyMs / 2);
  const phase = ref + median(offsets);
  const phaseSpread = Math.max(...offsets) - Math.min(...offsets);

  // The schedule as designed: one request every 1/rate from the first due time, for the duration.
  const first = attempts.reduce((min, a) => Math.min(min, a.due), Number.POSITIVE_INFINITY);
  const count = Math.round(stallRate * stallDuration);
  const interval = 1000 / stallRate;
  const stallEndAfter = (t: number) => {
    const end = Math.ceil((t - phase) / STALL.everyMs) * STALL.everyMs + phase;
    return end - t <= STALL.forMs && end > t ? end : undefined;
  };
  const truth = new Float64Array(count);
  let dueInStall = 0;
  for (let k = 0; k < count; k++) {
    const t = first + k * interval;
    const end = stallEndAfter(t);
    if (end !== undefined) dueInStall++;
    truth[k] = (end === undefined ? 0 : end - t) + baseP50;
  }
  truth.sort();
  const trueP99 = percentile(truth, 99);
  // Whole stalls inside the run: a share forMs/everyMs of requests wait U(0, forMs), the rest none.
  const analyticP99 = baseP50 + STALL.forMs * (1 - 0.01 / (STALL.forMs / STALL.everyMs));
  // The same p99 from the raw attempts, due to received: the recorder's histogram against its input.
  const tapP99 = percentile(Float64Array.from(attempts.map((a) => a.received - a.due)).sort(), 99);
  const p99Error = (runP99 - trueP99) / trueP99;

  console.log(
    `  run: ${stallResult.overall.requests} requests, dropped ${stallResult.workload.droppedIterations}, response p99 ${f(runP99, 1)}, service p99 ${f(runServiceP99, 1)}`,
  );
  console.log(
    `  answers to stalled requests arrived ${f(percentile(drain, 50), 1)} (median) to ${f(drain.at(-1) ?? 0, 1)} (last) after their stall's end: the release drains, which the simulation leaves out`,
  );
  console.log(
    `  stalls seen: ${stallEnds.length}, phase ${phase.toFixed(1)} ms mod ${STALL.everyMs} (spread ${phaseSpread.toFixed(1)} ms), ${dueInStall} of ${count} requests due inside a stall`,
  );

  // No rate: autocannon's closed loop flat out, as it is usually run.
  const closedLoop = async () => {
    const r = await autocannon({
      url: `${stalled.url}/pets/1`,
      connections,
      duration: stallDuration,
      headers,
    });
    const sample = {
      requests: r.requests.total,
      p50: r.latency.p50,
      p99: r.latency.p99,
      max: r.latency.max,
      non2xx: r.non2xx,
      errors: r.errors,
    };
    console.log(
      `  autocannon closed loop: ${sample.requests} requests, p50 ${sample.p50} ms, p99 ${sample.p99} ms, max ${sample.max} ms, non-2xx ${sample.non2xx}, errors ${sample.errors}`,
    );
    return sample;
  };
  const autocannonFlatOut = await closedLoop();

  // ---- figures ----------------------------------------------------------------------------------
  const p50Met = Math.abs(p50Difference) <= P50_TOLERANCE_MS;
  const p99Met = Math.abs(p99Error) <= P99_TOLERANCE;
  const rows: [string, string, string][] = [
    ['a. base p50 (no fault, median)', f(baseP50), ''],
    [`a. truth p50 (${ADDED_LATENCY_MS} ms + base)`, f(truthP50), ''],
    [`a. run p50 (--fault-latency ${ADDED_LATENCY_MS}ms, median)`, f(measuredP50), ''],
    [
      'a. difference run - truth',
      `${p50Difference >= 0 ? '+' : ''}${f(p50Difference)}`,
      `|d| <= ${P50_TOLERANCE_MS} ms: ${yes(p50Met)}`,
    ],
    [
      'a.   paired per round (median)',
      `${median(pairedDifferences) >= 0 ? '+' : ''}${f(median(pairedDifferences))}`,
      '',
    ],
    ['a.   service-time p50 difference - 50 ms', f(serviceDifference - ADDED_LATENCY_MS), ''],
    ['b. true p99 (schedule simulated)', f(trueP99, 1), ''],
    ['b.   analytic (whole stalls)', f(analyticP99, 1), ''],
    [
      'b. run response-time p99',
      f(runP99, 1),
      `within ${P99_TOLERANCE * 100}%: ${yes(p99Met)} (${(p99Error * 100).toFixed(1)}%)`,
    ],
    ['b.   run service-time p99', f(runServiceP99, 1), ''],
    ['b.   raw attempts, received - due', f(tapP99, 1), ''],
    [
      'b. autocannon closed loop p99',
      f(autocannonFlatOut.p99, 1),
      `${((autocannonFlatOut.p99 / trueP99) * 100).toFixed(1)}% of the truth`,
    ],
  ];
  console.log('');
  for (const [name, value, target] of rows)
    console.log(`${name.padEnd(46)} ${value.padStart(11)}  ${target}`);

  console.log(
    `written ${writeBenchReport('bench-accuracy', {
      latency: {
        rate,
        duration,
        rounds,
        addedMs: ADDED_LATENCY_MS,
        samples,
        baseP50,
        truthP50,
        measuredP50,
        differenceMs: p50Difference,
        pairedDifferencesMs: pairedDifferences,
        serviceDifferenceMs: serviceDifference,
        toleranceMs: P50_TOLERANCE_MS,
        met: p50Met,
      },
      stall: {
        rate: stallRate,
        duration: stallDuration,
        stall: STALL,
        stallsSeen: stallEnds.length,
        phaseMs: phase,
        phaseSpreadMs: phaseSpread,
        dueInStall,
        scheduled: count,
        baseServiceMs: baseService,
        trueP99,
        analyticP99,
        run: {
          requests: stallResult.overall.requests,
          dropped: stallResult.workload.droppedIterations,
          responseP99: runP99,
          serviceP99: runServiceP99,
          response: stallResult.overall.response,
        },
        rawAttemptsP99: tapP99,
        drainMs: { p50: percentile(drain, 50), p99: percentile(drain, 99), max: drain.at(-1) },
        errorShare: p99Error,
        tolerance: P99_TOLERANCE,
        met: p99Met,
        autocannon: { connections, ...autocannonFlatOut },
      },
    })}`,
  );
} finally {
  await stopServers();
}
