/**
 * bench:startup: what a start costs, side by side in one run with bare `node -e 0`: `--help`,
 * `run --print-config`, a 5 s `run` (BENCH_DURATION) against a local URL (its first request after launch, its wall,
 * its peak RSS), the same with 1, 2 and 4 worker threads (RSS per added worker), and the embedded
 * server's time to listen. Each is the median of BENCH_ROUNDS (default 5) rounds, the commands
 * interleaved within a round, so that a noisy neighbour hits all of them alike.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from '../src/cli/embedded-server.ts';
import { unlimitedPlansFile } from './harness.ts';
import { median, writeBenchReport } from './report.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
/** The runs' length: the acceptance's 5 s (a CI gate's check is about as short). */
const runSeconds = Number(process.env.BENCH_DURATION ?? 5);
const RUN = `run ${runSeconds} s`;
const BIN = fileURLToPath(new URL('../bin/petstore-load.js', import.meta.url));
const RSS_PRELOAD = fileURLToPath(new URL('./max-rss.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'petstore-load-bench-startup-'));

interface Timed {
  wallMs: number;
  rssMb?: number;
  /** The first request's arrival at the target after launch (runs only). */
  firstRequestMs?: number;
  /** When the process said its first line on stdout (the server's URL). */
  firstLineMs?: number;
}

/** The reference server behind a forwarder that notes when a request first arrives. */
const plans = unlimitedPlansFile();
const server = await spawnServer(['--plans', plans.path]);
const target = new URL(server.url);
let firstArrival: number | undefined;
const forwarder = createServer((incoming, answer) => {
  firstArrival ??= performance.now();
  const out = request(
    {
      host: target.hostname,
      port: target.port,
      path: incoming.url,
      method: incoming.method,
      headers: incoming.headers,
    },
    (reply) => {
      answer.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(answer);
    },
  );
  out.on('error', () => answer.destroy());
  incoming.pipe(out);
});
await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;

/** One process, launched and waited for: its wall, its peak RSS, its first request or line. */
function timed(args: string[], o: { untilLine?: boolean } = {}): Promise<Timed> {
  const rssFile = join(dir, `rss-${Math.random()}`);
  firstArrival = undefined;
  const launched = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, NODE_OPTIONS: `--import=${RSS_PRELOAD}`, BENCH_RSS_FILE: rssFile },
  });
  let firstLine: number | undefined;
  child.stdout.on('data', () => {
    firstLine ??= performance.now();
    if (o.untilLine) child.kill('SIGTERM');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const wallMs = performance.now() - launched;
      if (code !== 0 && !(o.untilLine && signal))
        return reject(new Error(`${args.join(' ')} exited ${code}`));
      // A server ended by its signal (re-raised after its cleanup) has no exit event to say it.
      const rssMb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) : undefined;
      resolve({
        wallMs,
        ...(rssMb !== undefined ? { rssMb } : {}),
        ...(firstArrival !== undefined ? { firstRequestMs: firstArrival - launched } : {}),
        ...(firstLine !== undefined ? { firstLineMs: firstLine - launched } : {}),
      });
    });
  });
}

const runArgs = (workers: number) => [
  BIN,
  'run',
  'catalogue-browse',
  '--duration',
  `${runSeconds}s`,
  // A realistic pace: the plan is vast, so that nothing is paced or refused.
  '--rate',
  '200',
  '--base-url',
  url,
  '--api-key',
  'enterprise-demo-key',
  '--plan',
  'enterprise',
  '--plans',
  plans.path,
  '--out',
  join(dir, `out-${workers}`),
  '--quiet',
  ...(workers > 1 ? ['--workers', String(workers)] : []),
];

const commands: Record<string, () => Promise<Timed>> = {
  'node -e 0': () => timed(['-e', '0']),
  '--help': () => timed([BIN, '--help']),
  'run --print-config': () => timed([BIN, 'run', '--print-config']),
  [RUN]: () => timed(runArgs(1)),
  [`${RUN} --workers 2`]: () => timed(runArgs(2)),
  [`${RUN} --workers 4`]: () => timed(runArgs(4)),
  'serve: time to listen': () => timed([BIN, 'serve', '--port', '0'], { untilLine: true }),
  'embedded server: listen': embedded,
};

/** `run`'s own server process (spawnServer, bin/embedded-server.js): from the call to its URL. */
async function embedded(): Promise<Timed> {
  const rssFile = join(dir, `rss-${Math.random()}`);
  const saved = { NODE_OPTIONS: process.env.NODE_OPTIONS, BENCH_RSS_FILE: process.env.BENCH_RSS_FILE };
  Object.assign(process.env, { NODE_OPTIONS: `--import=${RSS_PRELOAD}`, BENCH_RSS_FILE: rssFile });
  const launched = performance.now();
  try {
    const started = await spawnServer([]);
    const firstLineMs = performance.now() - launched;
    await started.stop();
    const rssMb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) : undefined;
    return { wallMs: firstLineMs, firstLineMs, ...(rssMb !== undefined ? { rssMb } : {}) };
  } finally {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

// BENCH_ONLY=REGEX: only the commands it matches (bare node always, as the yardstick).
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const chosen = Object.entries(commands).filter(([name]) => !only || name === 'node -e 0' || only.test(name));
const samples: Record<string, Timed[]> = Object.fromEntries(chosen.map(([k]) => [k, []]));
try {
  for (let round = 0; round < rounds; round++)
    for (const [name, measure] of chosen) {
      if (process.env.BENCH_VERBOSE) console.log(`round ${round + 1}: ${name}`);
      samples[name]?.push(await measure());
    }
} finally {
  forwarder.close();
  await server.stop();
  plans.remove();
  rmSync(dir, { recursive: true, force: true });
}

const med = (xs: Timed[], key: keyof Timed) => {
  const values = xs.map((x) => x[key]).filter((v): v is number => v !== undefined);
  return values.length ? Math.round(median(values) * 10) / 10 : undefined;
};
const figures = Object.fromEntries(
  Object.entries(samples).map(([name, xs]) => [
    name,
    {
      wallMs: med(xs, 'wallMs'),
      peakRssMb: med(xs, 'rssMb'),
      firstRequestMs: med(xs, 'firstRequestMs'),
      firstLineMs: med(xs, 'firstLineMs'),
    },
  ]),
);
const bare = figures['node -e 0']?.wallMs ?? Number.NaN;
console.log(`Node ${process.version}, medians of ${rounds} rounds`);
console.log('command                      wall ms  x bare  peak RSS MB  first request ms  first line ms');
for (const [name, f] of Object.entries(figures))
  console.log(
    `${name.padEnd(28)} ${String(f.wallMs).padStart(7)} ${((f.wallMs ?? 0) / bare).toFixed(2).padStart(7)} ${String(f.peakRssMb).padStart(12)} ${String(f.firstRequestMs ?? '').padStart(17)} ${String(f.firstLineMs ?? '').padStart(14)}`,
  );
const one = figures[RUN]?.peakRssMb ?? Number.NaN;
const perWorker = {
  2: Math.round(((figures[`${RUN} --workers 2`]?.peakRssMb ?? Number.NaN) - one) * 10) / 10,
  4: Math.round((((figures[`${RUN} --workers 4`]?.peakRssMb ?? Number.NaN) - one) / 3) * 10) / 10,
};
console.log(`RSS per added worker: ${perWorker[2]} MB (1 -> 2), ${perWorker[4]} MB (1 -> 4, per worker)`);
console.log(`written ${writeBenchReport('startup', { rounds, figures, rssPerAddedWorkerMb: perWorker })}`);
