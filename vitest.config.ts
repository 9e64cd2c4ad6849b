import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { unit } from './vitest.unit.config.ts';

/**
 * Files whose verdict depends on keeping a schedule against time-scaled windows (a paced window of
 * 1 to 3 s must fit its requests, a burst must land in one window, a capacity probe must not fall
 * behind the plan rate). Each passes alone with two busy-looping processes on the 2 cores, but on
 * CI, beside a second test file that starts servers and child CLIs of its own, capacity's paced
 * windows at time scale 60 fell behind and a paced probe's 429 came too late in its window to be
 * judged. So they run one at a time, after the rest: the neighbour they must tolerate is then
 * another job on the machine, not this suite.
 */
const TIMING = [
  // Two samples of real latency, told apart or not by a rank test: a neighbour's burst is a change.
  'test/report/compare.test.ts',
  // A stall's end and a latency's spread, timed on the answers.
  'test/server/faults.test.ts',
  // A tenant mix's isolation verdict compares latency before and after a noisy group starts, two
  // runs side by side; the tenant ramp finds where p99 breaks: both read latency under load.
  'test/scenario/tenant-mix.test.ts',
  'test/capacity/tenant-ramp.test.ts',
  // Real nginx's queue and express-slow-down for 8 s, told apart from the answers' timing alone: a
  // slow-down at its cap answers its four users at a steady interval, as a queue does, and what tells
  // the two apart is where the climb stopped. With neighbours it read as "both" in two of four
  // clean-clone runs; alone it has not.
  'test/client/delaying-limiters.test.ts',
  // capacity and a paced run against the reference server beside two busy loops of their own (both
  // cores full, so alone): loopback jitter at its widest must not read as a queue. 12 s.
  'test/record/no-queue-reference.test.ts',
];

/**
 * Timing files whose bounds are seconds, not milliseconds of latency, and that mostly wait on child
 * processes: two at a time, after the files above, so that a neighbour is one of these and never
 * more than one.
 */
const TIMING_PAIRED = [
  // `capacity` with its defaults: 43 s, of which 12 s of CPU, mostly the enterprise plan's 12 s
  // windows waited out. Its bounds are counts and a reset within 1 s; beside a neighbour, not alone.
  'test/cli/capacity.test.ts',
  // capacity, bench and run --workers: a second Ctrl-C 200 ms after the first, an exit within 2 s.
  'test/cli/second-signal.test.ts',
  // Every probe of a compliance run against the embedded server, and one against a server without Retry-After.
  'test/compliance/compliance-run.test.ts',
  // A run must end soon after its pause outlives it, and a second Ctrl-C at once: bounds in seconds.
  'test/cli/hostile-targets.test.ts',
  // A fleet of three generators, each in a network namespace of its own: workloads begun within
  // 250 ms, a breach seen by all within 2 s. 30 s, mostly waiting: after capacity's 43 s, while the
  // other worker ends the three above and runs shared-quota.
  'test/fleet/fleet-netns.test.ts',
  // Three generators sharing a Free key through Redis at 10 requests a second between them, judged on
  // 429s: last, so that it starts once capacity's 43 s have ended (the fleet test takes that worker,
  // the three above end near 53 s on the other), never beside capacity's bursts, one of which once
  // cost it a 429.
  'test/scenario/shared-quota.test.ts',
];

/**
 * Real third-party limiters probed from this process (nginx, express, fastify in front of the
 * reference server), whose verdicts read delays of 100 ms to a few ms: two at a time, beside one
 * another only. Beside files that start CLIs (each start a second or two of a core), an answer
 * delayed by a neighbour's start read as a queue, and express-slow-down as "both".
 */
const TIMING_LIMITERS = [
  // express-slow-down's threshold and step, probed from its real timing: mostly waiting.
  'test/capacity/delaying-limiters.test.ts',
  // Real nginx limit_conn over a 300 ms upstream and limit_req releasing a queue at 2 a second.
  'test/capacity/concurrency-limiters.test.ts',
  // Real nginx limit_req, @fastify/rate-limit and express-rate-limit, probed side by side at 500 ms
  // between requests; the same probes against their models run in simulated time.
  'test/capacity/real-limiters.test.ts',
  // Real limiters refusing with 503 (nginx as it ships), 403 (express-rate-limit) and a block
  // (Varnish), and rolling-rate-limiter's two moving windows, probed and run raw through the CLI
  // side by side: about 40 s, mostly waiting.
  'test/capacity/refusing-limiters.test.ts',
  // capacity --spec through the CLI: real nginx limit_req in front of a user's operation (a node:http
  // app serving a fixture document's GET), its rate read to 2% as the pet store's is: about 25 s.
  'test/capacity/spec-operation.test.ts',
  // Real nginx limit_req in raw mode for 10 s and express-rate-limit's draft-8 fields for 12 s.
  'test/client/real-limiters.test.ts',
  // Real nginx limit_conn over a 300 ms upstream: 4 virtual users for 12 s learn its cap from its 429s.
  'test/client/concurrency-limiters.test.ts',
  // Real nginx and third-party limiters: back-to-back requests must land inside one window.
  'test/helpers/limiters.test.ts',
  // express-rate-limit refusing with a 403, rolling-rate-limiter's moving windows of 1 to 3 s and
  // Varnish's vsthrottle blocking a key 1.5 s: each checked with 0.8 s or more to spare.
  'test/helpers/more-limiters.test.ts',
];

/**
 * Timing files that spend their time waiting: a few requests a second from CLIs against time-scaled
 * windows, under a quarter of a core each (measured: 9% to 29% of their wall time in CPU, start-up
 * included). Each keeps its schedule beside two busy-looping processes, so beside one another they
 * lose nothing, and three at a time they take a third as long (four at a time, each took longer).
 */
const TIMING_LIGHT = [
  // Two worker threads, each at its keys' rate, paced as one client.
  'test/scenario/workers.test.ts',
  // Two generators over a Redis that is killed, restarted or failed over mid-run: 10 requests a
  // second between them, judged on 429s and on the share of each window they used.
  'test/scenario/store-outage.test.ts',
  // capacity against two express-rate-limit windows stacked (4 s and 12 s): each timed within 10%.
  'test/capacity/stacked-windows.test.ts',
  // A tenant ramp's verdict is p99 < 300 ms at each step.
  'test/capacity/tenant-ramp-cli.test.ts',
  // A small day walked at 20 requests a second and the ban's 10 s waited out, from the CLI.
  'test/cli/capacity-daily-ban.test.ts',
  // capacity against rate-limiter-flexible blocking a key 12 s: the block timed within 1.5 s.
  'test/capacity/real-block.test.ts',
  // A run that ends when its workload is due (1.5 s), not after the 2 s grace.
  'test/scenario/held-past-end.test.ts',
  // bench --rate 100 for 2 s: a count of requests against the wall clock.
  'test/bench/bench-rate.test.ts',
  // Ctrl-C mid-run: exit 130 within 6 s of the signal (a 2 s teardown grace; one child, mostly waiting).
  'test/cli/run-sigint.test.ts',
  // --abort-on-fail: a 30 s run ended at its first failing second.
  'test/cli/run-abort.test.ts',
  // Over TLS behind nginx, 4 s at the plan rate (50 a second) over HTTP/1.1, then over HTTP/2, each
  // judged on the share of the quota it used.
  'test/transport/tls-pacing.test.ts',
];

/**
 * Files that mock a module (vi.mock) which other files load first: in a module graph shared with
 * them the mock would come too late, so these get a process of their own.
 */
const ISOLATED = ['test/threads/runner.test.ts'];

/**
 * The longest files of the first group, a third to a minute each on CI (mostly CLIs and servers
 * started and waited on): started first, so that the group does not end waiting on one of them.
 */
const LONG_FIRST = [
  'test/bench/bench-cli.test.ts',
  'test/cli/crash-safety.test.ts',
  'test/report/browser.test.ts',
  'test/cli/run.test.ts',
  'test/metrics/prometheus.test.ts',
  'test/metrics/commands.test.ts',
  'test/cli/run-gates.test.ts',
  'test/cli/capacity-print-config.test.ts',
  'test/server/fuzz.test.ts',
  'test/cli/serve.test.ts',
  // Five nginx and tinyproxy fronts, eleven CLIs through them: 20 s.
  'test/transport/tls-targets.test.ts',
  // The package packed, installed into a user's project (npm, from its cache), type-checked and run
  // six times: 30 s.
  'test/package/package.test.ts',
  // The action's steps as a runner runs them, and the GitLab template's script: 25 s.
  'test/deploy/ci-action.test.ts',
];

/** Where each file named above starts: in that order, before the files not named. */
const STARTS = [...LONG_FIRST, ...TIMING_LIMITERS, ...TIMING_LIGHT, ...TIMING, ...TIMING_PAIRED];

/**
 * A group ends when its last file does. Vitest's own order is by past durations where its cache has
 * them, else by file size, which on a clean clone (CI's) started the longest real-limiter file last
 * and the group then waited 15 s on it alone. Files named in the lists above start in the order
 * written there, longest first; the rest keep vitest's order, after them.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const start = (file: TestSpecification) => {
      const at = STARTS.indexOf(relative(root, file.moduleId));
      return at < 0 ? STARTS.length : at;
    };
    const keyed = sorted.map((file, index) => ({
      file,
      group: file.project.config.sequence.groupOrder,
      start: start(file),
      index,
    }));
    keyed.sort((a, b) => a.group - b.group || a.start - b.start || a.index - b.index);
    return keyed.map((k) => k.file);
  }
}

export default defineConfig({
  // A scenario's `import 'petstore-load'` reads the public module's source here, as tsconfig's paths do.
  resolve: { alias: { 'petstore-load': fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    sequence: { sequencer: LongestFirst },
    // Servers under test listen on loopback with real sockets and time-scaled windows:
    // a generous timeout absorbs a loaded 2-core CI machine without hiding hangs.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          // `npm run test:unit`'s files, as that loop runs them: one module graph per thread.
          name: 'unit',
          include: unit,
          pool: 'threads',
          isolate: false,
          // Beside the parallel project's files, three at a time in all (a group shares one limit):
          // those are mostly child processes and servers waiting, and keep no schedule.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...unit, ...TIMING, ...TIMING_PAIRED, ...TIMING_LIMITERS, ...TIMING_LIGHT, ...ISOLATED],
          // A process per worker, not per file: each file importing the source again cost about 2 s of
          // CPU (the project ran in 168 s instead of 211). A file leaves the process as it found it:
          // its servers closed, its CLIs killed, its mocks and timers restored.
          isolate: false,
          // Three test files at a time on the 2-core CI machine: most of these files' time is child
          // processes starting and servers waiting on timers (a whole run of the suite kept 1.2 of
          // the 2 cores busy with two at a time), and what needs a core to keep a schedule runs in
          // the projects below; the simulated-time files need CPU but no schedule.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ISOLATED,
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing-limiters',
          include: TIMING_LIMITERS,
          // Two at a time: three at once, nginx's GCRA rate was once read 2.5% off (the verdict
          // allows 2%) on a clean clone.
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing-light',
          include: TIMING_LIGHT,
          maxWorkers: 3,
          sequence: { groupOrder: 3 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 4 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing-paired',
          include: TIMING_PAIRED,
          maxWorkers: 2,
          sequence: { groupOrder: 5 },
        },
      },
    ],
  },
});
