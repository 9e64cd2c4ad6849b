import { describe, expect, it } from 'vitest';
import { formatInstant } from '../../src/api/duration.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { SetupError } from '../../src/scenario/engine.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { hostileTarget, rateLimitedFor } from '../helpers/hostile-target.ts';

/**
 * A server that pauses the key beyond the run (a Retry-After of 31 years, an HTTP-date in 2100, a
 * Reset far away): the run does not wait it out. It ends when it was due to, stops sending, and its
 * result says until when the server held it and which header said so.
 */

const WINDOWS = [{ name: 'minute', limit: 60, seconds: 60 }];
const browse = {
  name: 'browse',
  run: async (api: import('../../src/client/petstore-api.ts').Api) => void (await api.listPets({ limit: 1 })),
};

const spec = await loadSpec();

async function runAgainst(url: string, scenario: ReturnType<typeof defineScenario<unknown>>) {
  return executeScenario({
    scenario,
    workload: resolveWorkload(scenario.workload, 1),
    baseUrl: url,
    target: url,
    embeddedTarget: false,
    apiKey: 'k',
    operations: spec.operations,
    plan: 'free',
    windows: WINDOWS,
    timeScale: 1,
    enforce: true,
    spec: 'test',
  });
}

describe('a pause that outlives the run', () => {
  it.each([
    ['Retry-After delay-seconds', { 'retry-after': '999999999' }, 'Retry-After 999999999 s', 999_999_999_000],
    [
      'Retry-After HTTP-date',
      { 'retry-after': 'Fri, 01 Jan 2100 00:00:00 GMT' },
      'Retry-After Fri, 01 Jan 2100 00:00:00 GMT',
      Date.UTC(2100, 0, 1) - Date.now(),
    ],
    [
      'X-RateLimit-Reset',
      { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '4102444800' },
      'X-RateLimit-Reset 4102444800',
      4102444800_000 - Date.now(),
    ],
  ])(
    '%s: the workload ends on time, sends nothing more, and the result states the pause',
    async (_, headers, by, aheadMs) => {
      const target = await hostileTarget({ status: 429, headers });
      try {
        const startedAt = Date.now();
        const result = await runAgainst(
          target.url,
          defineScenario({
            name: 'held',
            workload: { executor: 'constant-vus', vus: 3, duration: '1500ms' },
            flows: [browse],
          }),
        );
        expect(resultProblem(result)).toBeUndefined();
        // The first answers paused the key: the virtual users already admitted are all it sent.
        expect(result.overall.requests).toBeLessThanOrEqual(3);
        expect(result.overall.rateLimited).toBe(result.overall.requests);
        expect(result.compliance.heldPastEnd?.by).toBe(by);
        expect(Math.abs((result.compliance.heldPastEnd?.until ?? 0) - startedAt - aheadMs)).toBeLessThan(
          60_000,
        );
        // It ended when its workload was due to (1.5 s), not after the 2 s grace (3.5 s) nor ever: the
        // run's own clock, so that a busy machine's slow start of the test does not count.
        expect(result.meta.partial).toBe(false);
        expect(result.meta.durationSeconds).toBeLessThan(1.5 + 1.9);
      } finally {
        await target.close();
      }
    },
  );

  it('during setup: setup fails at once, saying until when in a date, and its requests are kept in a result', async () => {
    const target = await rateLimitedFor('999999999');
    try {
      const scenario = defineScenario({
        name: 'held-setup',
        workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
        setup: async (api) => {
          const list = await api.listPets({ limit: 1 });
          await api.listPets({ limit: 1 });
          return list.status;
        },
        flows: [browse],
      });
      const failure = await runAgainst(target.url, scenario).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(SetupError);
      const error = failure as SetupError;
      const until = error.result?.compliance.heldPastEnd?.until ?? 0;
      expect(error.message).toContain(`held until ${formatInstant(until)} (Retry-After 999999999 s)`);
      expect(formatInstant(until)).toMatch(/^20[5-9]\d-/);
      expect(target.requests()).toBe(1);
      expect(error.result?.overall.requests).toBe(1);
      expect(error.result?.meta.partial).toBe(true);
      expect(resultProblem(error.result)).toBeUndefined();
    } finally {
      await target.close();
    }
  });

  it('a setup that outlasts its setupTimeout fails with the limit named, its result kept', async () => {
    const target = await hostileTarget('silent');
    try {
      const scenario = defineScenario({
        name: 'slow-setup',
        setupTimeout: '300ms',
        workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
        setup: async (api) => void (await api.listPets({ limit: 1 })),
        flows: [browse],
      });
      const error = await runAgainst(target.url, scenario).then(
        () => undefined,
        (e: unknown) => e as SetupError,
      );
      expect(error?.message).toBe("setup did not finish within 0.3 s (the scenario's setupTimeout)");
      expect(error?.result?.meta.partial).toBe(true);
    } finally {
      await target.close();
    }
  });
});

describe('formatInstant', () => {
  it('says a date no Date can hold in words rather than throwing', () => {
    expect(formatInstant(Date.UTC(2058, 0, 3, 4, 5, 6))).toBe('2058-01-03 04:05:06 UTC');
    expect(formatInstant(999_999_999_999_999 * 1000)).toBe('a date beyond the year 275760');
    expect(formatInstant(Number.NaN)).toBe('an unknown time');
  });
});
