import type { IncomingHttpHeaders } from 'node:http';
import type { Operation } from '../../src/api/operations.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { type BuildInput, buildResult } from '../../src/result/build.ts';
import type { RunConfig, RunResult } from '../../src/result/types.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operations, T0 } from './unit-attempt.ts';

export interface Sample {
  op: string;
  /** Service time (sent to received), ms. */
  ms: number;
  status?: number;
  /** Transport error code: the attempt has no response. */
  errorCode?: string;
  /** Seconds after the start when it was received (default: spread over the run). */
  at?: number;
  /** Body of a success (default `[]`, valid for the list operations). */
  json?: unknown;
  /** Headers besides the well-formed defaults, e.g. `retry-after` to make a 503 the limiter's refusal. */
  headers?: IncomingHttpHeaders;
}

/**
 * The meta of a made-up run as `buildResult` takes it: scenario `synthetic` against the embedded
 * reference server on the free plan, from T0 for 10 s, not partial; `overrides` replace any of it.
 */
export function syntheticMeta(overrides: Partial<BuildInput['meta']> = {}): BuildInput['meta'] {
  return {
    toolVersion: '0.1.0',
    nodeVersion: process.version,
    scenario: 'synthetic',
    target: 'http://127.0.0.1:8080',
    embeddedTarget: true,
    plan: 'free',
    startedAt: new Date(T0).toISOString(),
    endedAt: new Date(T0 + 10_000).toISOString(),
    partial: false,
    ...overrides,
  };
}

/**
 * The config of a made-up run: one virtual user, enforced pacing on the free windows at time scale
 * 1, 10 s timeout, 3 attempts, the bundled spec; `overrides` replace any of it.
 */
export function syntheticConfig(overrides: Partial<RunConfig> = {}): RunConfig {
  return {
    workload: { executor: 'constant-vus', vus: 1 },
    enforce: true,
    allowBanRisk: false,
    timeScale: 1,
    windows: FREE_WINDOWS,
    timeoutMs: 10_000,
    maxAttempts: 3,
    spec: 'petstore.openapi.yaml',
    ...overrides,
  };
}

/**
 * A result built by the real recorder and builder from attempts made up here: figures known in
 * advance (latencies, statuses, errors) for thresholds, JUnit and summaries to be judged against.
 */
export async function syntheticResult(
  samples: Sample[],
  options: { seconds?: number; scenario?: string; dropped?: number } = {},
): Promise<RunResult> {
  const table = await operations();
  const seconds = options.seconds ?? 10;
  const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
  recorder.measure(true, T0);
  samples.forEach((s, i) => {
    const op = table.get(s.op) as Operation;
    const receivedAt = T0 + (s.at ?? (i * seconds) / samples.length) * 1000;
    const status = s.errorCode ? 0 : (s.status ?? 200);
    recorder.record(
      makeAttempt(op, {
        sentAt: receivedAt - s.ms,
        receivedAt,
        status,
        errorCode: s.errorCode,
        ...(s.errorCode
          ? { headers: undefined }
          : s.headers
            ? { headers: okHeaders(receivedAt, s.headers) }
            : {}),
        json: status >= 400 ? errorBody(status) : status === 0 ? undefined : 'json' in s ? s.json : [],
      }),
    );
  });
  recorder.measure(false, T0 + seconds * 1000);
  return buildResult({
    meta: syntheticMeta({
      scenario: options.scenario ?? 'synthetic',
      endedAt: new Date(T0 + seconds * 1000).toISOString(),
    }),
    config: syntheticConfig({ workload: { executor: 'constant-vus', vus: 1, durationMs: seconds * 1000 } }),
    recorder,
    operations: [...table.values()],
    workload: {
      iterations: samples.length,
      droppedIterations: options.dropped ?? 0,
      failedIterations: 0,
      flows: { synthetic: { iterations: samples.length, failures: 0 } },
    },
  });
}

/**
 * A run whose limiter refused in more than one status: 12 429s and 3 503s with Retry-After among 20
 * successes, 2 bare 503s (unexplained) and a bare 403 to the key admitted before.
 */
export function mixedRefusals(options: { scenario?: string } = {}): Promise<RunResult> {
  return syntheticResult(
    [
      ...ladder('listPets', 20),
      ...ladder('listPets', 12, 429),
      ...Array.from({ length: 3 }, () => ({
        op: 'listPets',
        ms: 5,
        status: 503,
        headers: { 'retry-after': '1' },
      })),
      ...ladder('listPets', 2, 503),
      { op: 'listPets', ms: 5, status: 403 },
    ],
    options,
  );
}

/** `count` samples of one operation with service times 1..count ms (so pN is N% of count). */
export function ladder(op: string, count: number, status = 200): Sample[] {
  return Array.from({ length: count }, (_, i) => ({ op, ms: i + 1, status }));
}
