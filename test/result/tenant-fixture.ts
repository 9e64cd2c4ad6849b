import type { Operation } from '../../src/api/operations.ts';
import type { RateWindow } from '../../src/api/plans.ts';
import {
  buildTenantMix,
  type TenantGroupSpec,
  type TenantMix,
  type TenantRef,
} from '../../src/api/tenants.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { buildResult } from '../../src/result/build.ts';
import type { RunResult } from '../../src/result/types.ts';
import { syntheticConfig, syntheticMeta } from '../helpers/synthetic-result.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operations, T0 } from '../helpers/unit-attempt.ts';

/*
 * A tenant mix's attempts made up here and fed to the real recorder and builder: tiers, their
 * utilisation and the noisy-neighbour stretches with figures known in advance.
 */

export const PRO_WINDOWS: RateWindow[] = [
  { name: 'minute', limit: 300, seconds: 60 },
  { name: 'day', limit: 10_000, seconds: 86_400 },
];

/**
 * Free: 3 keys, then 2 more in a second unnamed group (one tier of 5); pro: 2 keys; `abusive`: 2
 * free keys in raw mode from 5 s (the noisy neighbour); `vip`: 1 named pro key, paced.
 */
export const MIX_SPECS: TenantGroupSpec[] = [
  { plan: 'free', keys: 3 },
  { plan: 'pro', keys: 2 },
  { plan: 'free', keys: 2 },
  { plan: 'free', keys: 2, name: 'abusive', enforce: false, startTime: '5s' },
  { plan: 'pro', keys: 1, name: 'vip' },
];

export function tenantMix(specs: TenantGroupSpec[] = MIX_SPECS): TenantMix {
  return buildTenantMix(
    specs,
    (plan) => (plan === 'pro' ? PRO_WINDOWS : FREE_WINDOWS),
    (plan, n) => `${plan}-secret-${n}`,
  );
}

export function tenantOf(mix: TenantMix, label: string): TenantRef {
  const found = mix.tenants.find((t) => t.tenant.label === label);
  if (!found) throw new Error(`no tenant ${label}`);
  return found.tenant;
}

export interface TenantSample {
  /** The tenant's label: `free#4`, `abusive#1`. */
  tenant: string;
  /** Sent this many ms after the workload's start (T0). */
  at: number;
  /** Service time, ms (default 10). */
  ms?: number;
  status?: number;
  errorCode?: string;
  /** Seconds the 429's Retry-After says. */
  retryAfter?: number;
}

export async function tenantAttempt(mix: TenantMix, s: TenantSample): Promise<AttemptRecord> {
  const op = (await operations()).get('listPets') as Operation;
  const tenant = tenantOf(mix, s.tenant);
  const sentAt = T0 + s.at;
  const receivedAt = sentAt + (s.ms ?? 10);
  const status = s.errorCode ? 0 : (s.status ?? 200);
  const limit = String((tenant.windows[0] as RateWindow).limit);
  const headers =
    status === 0
      ? undefined
      : {
          ...okHeaders(receivedAt),
          'x-ratelimit-limit': limit,
          'x-ratelimit-remaining': status === 429 ? '0' : '1',
          ...(s.retryAfter !== undefined ? { 'retry-after': String(s.retryAfter) } : {}),
        };
  return makeAttempt(op, {
    keyLabel: tenant.label,
    tenant,
    sentAt,
    receivedAt,
    status,
    errorCode: s.errorCode,
    headers,
    json: status === 0 ? undefined : status >= 400 ? errorBody(status) : [],
  });
}

/** A recorder for `mix` whose workload runs from T0 to T0 + `seconds`, fed `samples` (its setup: `setup`). */
export async function tenantRecorder(
  mix: TenantMix,
  samples: TenantSample[],
  options: { seconds?: number; setup?: TenantSample[] } = {},
): Promise<Recorder> {
  const recorder = new Recorder({
    startedAt: T0 - 1000,
    windows: FREE_WINDOWS,
    workloadOnly: true,
    tenants: mix,
  });
  for (const s of options.setup ?? []) recorder.record(await tenantAttempt(mix, { ...s, at: s.at - 1000 }));
  recorder.measure(true, T0);
  const attempts = await Promise.all(samples.map((s) => tenantAttempt(mix, s)));
  // Responses reach the recorder in the order they were received.
  attempts.sort((a, b) => a.receivedAt - b.receivedAt);
  for (const a of attempts) recorder.record(a);
  recorder.measure(false, T0 + (options.seconds ?? 10) * 1000);
  return recorder;
}

/** The result of a tenant run of `seconds` (10 by default) from `samples`. */
export async function tenantResult(
  mix: TenantMix,
  samples: TenantSample[],
  options: { seconds?: number; shard?: { index: number; count: number } } = {},
): Promise<RunResult> {
  const seconds = options.seconds ?? 10;
  const recorder = await tenantRecorder(mix, samples, { seconds });
  return buildResult({
    meta: syntheticMeta({
      scenario: 'tenants',
      endedAt: new Date(T0 + seconds * 1000).toISOString(),
      ...(options.shard ? { shard: options.shard } : {}),
    }),
    config: syntheticConfig(),
    recorder,
    operations: [...(await operations()).values()],
    workload: { iterations: samples.length, droppedIterations: 0, failedIterations: 0, flows: {} },
  });
}

/**
 * `count` requests of each listed tenant spread over [fromMs, toMs), service `ms` each, plus a
 * little spread (so that a rank test sees a distribution, not one value).
 */
export function spread(
  tenants: string[],
  count: number,
  fromMs: number,
  toMs: number,
  ms: number,
): TenantSample[] {
  return tenants.flatMap((tenant, k) =>
    Array.from({ length: count }, (_, i) => ({
      tenant,
      at: fromMs + ((i + k / tenants.length) * (toMs - fromMs)) / count,
      ms: ms + ((i * 7 + k) % 5) * 0.1,
    })),
  );
}
