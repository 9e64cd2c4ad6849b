import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import {
  type CliOutcome,
  cliWorkspace,
  outcomeContext,
  readJson,
  runCli,
} from '../helpers/integration-cli.ts';
import { heldFigures } from '../helpers/limiter-verdicts.ts';

/**
 * The reference server never queues: neither `capacity` nor a paced `run` against it, through the
 * CLI with the embedded server, may claim that its limiter held an answer. A capacity run against it
 * once said "2 responses held by the target's limiter (a queue releasing 175/s)": sends paced at a
 * plan's rate come back from a quick service at steady gaps, and a loopback jitter of 3 ms passed for
 * a hold. Loopback jitter is widest on a busy machine, so both run beside two busy-looping processes
 * (the 2 cores full), side by side, Pro at time scale 30 (150 requests a second, 2 s windows): about
 * 12 s. What a real queue is held to is test/client/delaying-limiters.test.ts and
 * test/capacity/concurrency-limiters.test.ts.
 */

const work = cliWorkspace('no-queue');
const TIME_SCALE = '30';
let busy: ChildProcess[] = [];
let capacity: { outcome: CliOutcome; result: RunResult };
let paced: { outcome: CliOutcome; result: RunResult };

/** The service time the detector held every answer against: none of it was a limiter's. */
const serviceFigures = (r: RunResult) => {
  const s = r.overall.service;
  return `${r.overall.requests} requests, service p50 ${s.p50} ms, p99 ${s.p99} ms, longest ${s.max} ms`;
};

async function cli(args: string[]): Promise<{ outcome: CliOutcome; result: RunResult }> {
  const out = work.fresh(args[0] as string);
  const outcome = await runCli([...args, '--time-scale', TIME_SCALE, '--out', out], 60_000);
  return { outcome, result: readJson(join(out, 'result.json')) as RunResult };
}

beforeAll(async () => {
  // Each loop ends by itself after a minute: were this process killed outright, none would stay.
  busy = [1, 2].map(() =>
    spawn(process.execPath, ['-e', 'const end = Date.now() + 60_000; while (Date.now() < end);'], {
      stdio: 'ignore',
    }),
  );
  try {
    [capacity, paced] = await Promise.all([
      cli(['capacity', '--api-key', 'pro=pro-demo-key']),
      cli(['run', 'catalogue-browse', '--plan', 'pro', '--duration', '4s', '--rate', '100%']),
    ]);
  } finally {
    for (const child of busy) child.kill('SIGKILL');
  }
}, 60_000);

afterAll(() => {
  for (const child of busy) child.kill('SIGKILL');
});

describe('the reference server, on a busy machine: no queue claimed', () => {
  it('capacity: no limiter queue, no response held', () => {
    const { outcome, result } = capacity;
    const why = `${outcomeContext(outcome)}\n${heldFigures(result)}`;
    const report = result.capacity?.[0];
    console.log(`capacity against the reference server, busy: ${serviceFigures(result)}`);
    // At the plan's rate for two windows and one exhausted: the regime the false queue came from.
    expect(result.overall.requests, why).toBeGreaterThan(600);
    expect(report?.limiter.type, why).toBe('fixed-window');
    expect(report?.limiter.queue ?? null, why).toBeNull();
    expect(result.compliance.heldByLimiter, why).toBeUndefined();
    expect(outcome.stdout, why).not.toContain('held by');
  });

  it('a paced run: no response held', () => {
    const { outcome, result } = paced;
    const why = `${outcomeContext(outcome)}\n${heldFigures(result)}`;
    console.log(`paced run against the reference server, busy: ${serviceFigures(result)}`);
    expect(outcome.code, why).toBe(0);
    expect(result.overall.requests, why).toBeGreaterThan(300);
    expect(result.compliance.heldByLimiter, why).toBeUndefined();
    expect(outcome.stdout, why).not.toContain('held by');
  });
});
