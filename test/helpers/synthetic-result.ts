import type { Operation } from '../../src/api/operations.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { buildResult } from '../../src/result/build.ts';
import type { RunResult } from '../../src/result/types.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, operations, T0 } from './unit-attempt.ts';

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
        ...(s.errorCode ? { headers: undefined } : {}),
        json: status >= 400 ? errorBody(status) : status === 0 ? undefined : 'json' in s ? s.json : [],
      }),
    );
  });
  recorder.measure(false, T0 + seconds * 1000);
  return buildResult({
    meta: {
      toolVersion: '0.1.0',
      nodeVersion: process.version,
      scenario: options.scenario ?? 'synthetic',
      target: 'http://127.0.0.1:8080',
      embeddedTarget: true,
      plan: 'free',
      startedAt: new Date(T0).toISOString(),
      endedAt: new Date(T0 + seconds * 1000).toISOString(),
      partial: false,
    },
    config: {
      workload: { executor: 'constant-vus', vus: 1, durationMs: seconds * 1000 },
      enforce: true,
      allowBanRisk: false,
      timeScale: 1,
      windows: FREE_WINDOWS,
      timeoutMs: 10_000,
      maxAttempts: 3,
      spec: 'petstore.openapi.yaml',
    },
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

/** `count` samples of one operation with service times 1..count ms (so pN is N% of count). */
export function ladder(op: string, count: number, status = 200): Sample[] {
  return Array.from({ length: count }, (_, i) => ({ op, ms: i + 1, status }));
}
