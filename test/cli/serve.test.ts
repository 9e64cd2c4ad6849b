import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { DEMO_KEYS } from '../../src/api/demo-keys.ts';
import { InputError } from '../../src/api/input-error.ts';
import { RATE_LIMIT_HEADER } from '../../src/api/rate-limit-headers.ts';
import { mintedKey, TENANT_SEED_ENV } from '../../src/api/tenants.ts';
import { serveOptions } from '../../src/cli/command-options.ts';
import { parseTenantKeys, serve, serverOptionsFromArgs } from '../../src/cli/serve.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { call } from '../helpers/http.ts';
import { type Cli, killAllClis, killCli, spawnCli, withTimeout } from '../helpers/integration-cli.ts';

/**
 * `petstore-load serve` as users run it: a child process through bin/petstore-load.js (tsx, ~1 s a
 * start), its printed lines, its exit codes, its signals. Every child is killed by pid when its test
 * ends, whatever happened.
 */

/** How long a child may take to start, or to exit on its own, on a loaded CI machine. */
// A start is a second of a core, alone; beside three test files of CPU it once took more than 15 s.
const START_TIMEOUT_MS = 30_000;
/** Children starting at once: each start is ~1.5 s of CPU, and CI machines have 2 cores. */
const parallel = pLimit(2);

afterAll(killAllClis);

/** Waits until stdout matches, failing early (with what was printed) if the child exits first. */
async function waitForOutput(cli: Cli, pattern: RegExp): Promise<RegExpMatchArray> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited = false;
  void cli.exited.then(() => {
    exited = true;
  });
  for (;;) {
    const match = cli.stdout().match(pattern);
    if (match) return match;
    if (exited || Date.now() > deadline) {
      throw new Error(
        `${exited ? 'exited' : 'timed out'} before printing ${pattern}\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs a command that should end on its own; kills it (by pid) if it does not. */
async function runToExit(args: string[]) {
  const cli = spawnCli(args);
  try {
    const { code, signal } = await withTimeout(
      cli.exited,
      START_TIMEOUT_MS,
      `petstore-load ${args.join(' ')}`,
    );
    return { code, signal, stdout: cli.stdout(), stderr: cli.stderr() };
  } finally {
    killCli(cli);
  }
}

const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/m;

/** Starts `serve` with these flags and waits until it listens and has printed the line `ready`. */
async function startServe(args: string[], ready: RegExp, env: Record<string, string> = {}) {
  const cli = spawnCli(['serve', ...args], env);
  try {
    const [, url] = (await waitForOutput(cli, LISTENING)) as [string, string, string];
    await waitForOutput(cli, ready);
    return { cli, url };
  } catch (error) {
    killCli(cli);
    throw error;
  }
}

/** Sends a stop signal and expects a clean exit (code 0, not killed by the signal) within a few seconds. */
async function stop(cli: Cli, signal: 'SIGTERM' | 'SIGINT'): Promise<void> {
  process.kill(cli.child.pid as number, signal);
  expect(await withTimeout(cli.exited, 5_000, `exit after ${signal}`)).toEqual({ code: 0, signal: null });
  expect(cli.stdout()).toMatch(new RegExp(`^${signal}: stopping$`, 'm'));
}

/** A usage error: one line on stderr, naming the tool, no stack trace, exit code 2, nothing served. */
function expectUsageError(result: Awaited<ReturnType<typeof runToExit>>, mentions: RegExp): void {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^petstore-load: /);
  expect(lines[0]).toMatch(mentions);
  expect(result.stderr).not.toContain('    at ');
  expect(result.stdout).not.toContain('listening on');
  expect(result.signal).toBeNull();
  expect(result.code).toBe(2);
}

let dir: string;
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-serve-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// Every test below is mostly waiting for a child to start: they run side by side, at most two
// children starting at once (`parallel`), each killing its own children in `finally`.

// A start is bounded by START_TIMEOUT_MS; a test, its start, requests and stop, by three of it.
describe.concurrent('serve: start, answer, stop', { timeout: 3 * START_TIMEOUT_MS }, () => {
  it('prints its URL and the demo keys, serves them, and stops on SIGTERM with exit code 0', () =>
    parallel(async () => {
      const { cli, url } = await startServe(['--port', '0', '--time-scale', '60'], /enterprise-demo-key/);
      try {
        expect(Number(new URL(url).port)).toBeGreaterThan(0);
        for (const [key, plan] of Object.entries(DEMO_KEYS)) {
          expect(cli.stdout()).toMatch(new RegExp(`^\\s+${key}\\s+${plan}$`, 'm'));
        }

        const reply = await call(url, '/pets', { key: 'pro-demo-key' });
        expect(reply.status).toBe(200);
        expect(Array.isArray(reply.body)).toBe(true);
        expect(reply.headers[RATE_LIMIT_HEADER.limit]).toBe('300');

        await stop(cli, 'SIGTERM');
        expect(cli.stderr()).toBe('');
        // The port is free again: nothing listens there any more.
        await expect(call(url, '/pets', { key: 'pro-demo-key' })).rejects.toThrow();
      } finally {
        killCli(cli);
      }
    }));

  it('--keys replaces the demo keys without printing them; SIGINT stops it with exit code 0', () =>
    parallel(async () => {
      const secret = 'custom-s3cret-key-7f3a';
      const keys = file('keys.json', JSON.stringify({ [secret]: 'pro' }));
      const { cli, url } = await startServe(['--port', '0', '--keys', keys], /^API keys: /m);
      try {
        const accepted = await call(url, '/pets', { key: secret });
        expect(accepted.status).toBe(200);
        expect(accepted.headers[RATE_LIMIT_HEADER.limit]).toBe('300');
        const refused = await call(url, '/pets', { key: 'free-demo-key' });
        expect(refused.status).toBe(401);
        expect(refused.body).toMatchObject({ code: 'unauthorized', status: 401 });

        await stop(cli, 'SIGINT');
        const printed = cli.stdout() + cli.stderr();
        expect(printed).toContain('API keys: 1');
        expect(printed).not.toContain(secret);
        expect(printed).not.toContain('free-demo-key');
      } finally {
        killCli(cli);
      }
    }));

  it('--tenant-keys mints keys from the seed in the environment, and prints neither', () =>
    parallel(async () => {
      const seed = 'serve-test-seed-91c2';
      const { cli, url } = await startServe(
        ['--port', '0', '--tenant-keys', 'pro=3,free=2'],
        /^minted 5 tenant keys \(pro 3, free 2\) from the seed in \$PETSTORE_LOAD_TENANT_SEED$/m,
        { [TENANT_SEED_ENV]: seed },
      );
      try {
        const reply = await call(url, '/pets', { key: mintedKey(seed, 'pro', 2) });
        expect(reply.status).toBe(200);
        expect(reply.headers[RATE_LIMIT_HEADER.limit]).toBe('300');
        expect((await call(url, '/pets', { key: mintedKey(seed, 'pro', 4) })).status).toBe(401);
        await stop(cli, 'SIGTERM');
        const printed = cli.stdout() + cli.stderr();
        expect(printed).not.toContain(seed);
        expect(printed).not.toContain('-tenant-');
      } finally {
        killCli(cli);
      }
    }));

  it('--plans with free perMinute 3 and --time-scale 60: the 4th request of a burst gets 429', () =>
    parallel(async () => {
      const plans = file('plans.json', JSON.stringify({ free: { perMinute: 3 } }));
      const { cli, url } = await startServe(
        ['--port', '0', '--plans', plans, '--time-scale', '60'],
        /^time scale 60: /m,
      );
      try {
        // Warm the server up with another plan's key, so that the burst is quick (a minute is 1 s here).
        expect((await call(url, '/pets', { key: 'pro-demo-key' })).status).toBe(200);
        const replies = [];
        for (let i = 0; i < 4; i++) replies.push(await call(url, '/pets', { key: 'free-demo-key' }));
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
        const limited = replies[3];
        expect(limited?.headers[RATE_LIMIT_HEADER.limit]).toBe('3');
        expect(limited?.headers[RATE_LIMIT_HEADER.retryAfter]).toBe('1');
        expect(limited?.body).toMatchObject({ code: 'rate_limited', status: 429 });
        await stop(cli, 'SIGTERM');
      } finally {
        killCli(cli);
      }
    }));

  it('an address in use: exit code 4 and one line', () =>
    parallel(async () => {
      const blocker = createServer();
      try {
        await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
        const address = blocker.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        expect(port).toBeGreaterThan(0);

        const result = await runToExit(['serve', '--port', String(port)]);
        const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
        expect(lines, result.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(/^petstore-load: /);
        expect(lines[0]).toContain(String(port));
        expect(result.stderr).not.toContain('    at ');
        expect(result.stdout).not.toContain('listening on');
        expect(result.code).toBe(4);
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
    }));
});

describe.concurrent('serve: bad flags and files', () => {
  let badPlansJson: string;
  let negativeLimit: string;
  let unknownPlanKeys: string;

  beforeAll(() => {
    badPlansJson = file('bad.json', '{"free": {"perMinute": 3,}');
    negativeLimit = file('negative.json', JSON.stringify({ free: { perMinute: -1 } }));
    unknownPlanKeys = file('keys-unknown-plan.json', JSON.stringify({ 'some-key': 'platinum' }));
  });

  // Each case: the flags after `serve --port 0` (so that a wrongly accepted case could not collide
  // with anything while it listens), and what the one line must name.
  const cases: [string, () => string[], RegExp][] = [
    ['an unknown flag', () => ['--bogus-flag'], /bogus-flag/],
    ['--port abc', () => ['--port', 'abc'], /port/],
    ['--time-scale 0', () => ['--time-scale', '0'], /time.?scale/i],
    ['--fault-stall 1s', () => ['--fault-stall', '1s'], /fault-stall/],
    ['--fault-error-rate 2', () => ['--fault-error-rate', '2'], /error.?rate/i],
    ['--headers ietf-9', () => ['--headers', 'ietf-9'], /headers/],
    // Longer than a timer holds: refused rather than fired at once.
    ['--fault-latency 30d', () => ['--fault-latency', '30d'], /--fault-latency.*at most 1h/],
    ['--plans with a missing file', () => ['--plans', join(dir, 'missing.json')], /missing\.json/],
    ['--plans with invalid JSON', () => ['--plans', badPlansJson], /bad\.json.*JSON/],
    ['--plans with a negative limit', () => ['--plans', negativeLimit], /negative\.json/],
    ['--keys with a key of an unknown plan', () => ['--keys', unknownPlanKeys], /platinum/],
  ];

  it.each(cases)('%s: one line on stderr and exit code 2', async (_, args, mentions) => {
    expectUsageError(await cliInProcess(['serve', '--port', '0', ...args()]), mentions);
  });

  it('a bad flag ends the process itself: one line on stderr and exit code 2', async () => {
    const [, args, mentions] = cases[0] as (typeof cases)[number];
    expectUsageError(await parallel(() => runToExit(['serve', '--port', '0', ...args()])), mentions);
  });
});

/** The flags as yargs gives them to `serve`, without a child process. */
const serveArgs = (argv: string[]) => serveOptions(yargs(argv)).parse();

describe('serve: --tenant-keys and --fault-shared-bucket, in this process', () => {
  it.each([
    ['free', /^--tenant-keys: 'free' is not plan=N \(e\.g\. free=200,pro=50\)$/],
    ['free=0', /^--tenant-keys: free=0: N must be a whole number >= 1$/],
    ['free=2,pro=1.5', /^--tenant-keys: pro=1\.5: N must be a whole number >= 1$/],
    ['free=2,free=3', /^--tenant-keys: plan 'free' is given twice$/],
  ])('--tenant-keys %s is refused in one line', (text, message) => {
    expect(() => parseTenantKeys(text)).toThrow(message);
  });

  it('reads plan=N pairs, and the seed from the environment only', async () => {
    expect(parseTenantKeys('free=200, pro=50')).toEqual({ free: 200, pro: 50 });
    const args = await serveArgs(['--tenant-keys', 'business=2']);
    expect(serverOptionsFromArgs(args, { [TENANT_SEED_ENV]: 'from-env' })).toMatchObject({
      tenantKeys: { business: 2 },
      tenantSeed: 'from-env',
    });
    // Unset or empty: the server's documented default seed.
    expect(serverOptionsFromArgs(args, { [TENANT_SEED_ENV]: '' }).tenantSeed).toBeUndefined();
    expect(serverOptionsFromArgs(args, {}).tenantSeed).toBeUndefined();
  });

  it.each([
    [['--tenant-keys', 'free=99999,pro=2'], /^--tenant-keys: more than 100,000 keys in all$/],
    [['--tenant-keys', 'gold=3'], /^--tenant-keys: unknown plan 'gold' \(known: free, pro, /],
    [['--no-rate-limit', '--fault-shared-bucket'], /^--fault-shared-bucket needs rate limiting/],
  ])('%j: the options are refused, naming the flag, before anything listens', async (argv, message) => {
    const error = await serve(await serveArgs(['--port', '0', ...argv])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(message);
  });

  it('--fault-shared-bucket sets the fault', async () => {
    const options = serverOptionsFromArgs(await serveArgs(['--fault-shared-bucket']), {});
    expect(options.faults?.sharedBucket).toBe(true);
  });
});
