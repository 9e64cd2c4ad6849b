import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { DIALECTS } from '../../src/api/rate-limit-dialect.ts';
import { CONTRACTS } from '../../src/record/checks/contract.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { type BuildInput, buildResult } from '../../src/result/build.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { syntheticConfig, syntheticMeta } from '../helpers/synthetic-result.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operations, T0 } from '../helpers/unit-attempt.ts';

let ops: Operation[];
let input: BuildInput;
let result: RunResult;

const op = (id: string) => ops.find((o) => o.id === id) as Operation;
const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

beforeAll(async () => {
  ops = [...(await operations()).values()];
  const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
  recorder.measure(true);
  for (let i = 0; i < 8; i++) {
    const at = T0 + i * 500;
    recorder.record(makeAttempt(op('listPets'), { sentAt: at, receivedAt: at + 12, json: [pet] }));
  }
  recorder.record(
    makeAttempt(op('getPetById'), {
      sentAt: T0 + 4100,
      receivedAt: T0 + 4110,
      status: 429,
      json: errorBody(429, 'rate_limited'),
      headers: { ...okHeaders(T0 + 4110), 'x-ratelimit-remaining': '0', 'retry-after': '1' },
      retried: true,
    }),
  );
  // Inside the Retry-After window: a violation. Neither this nor the 429 carries the deprecation
  // headers a deprecated operation must send: two check failures.
  recorder.record(makeAttempt(op('getPetById'), { sentAt: T0 + 4500, receivedAt: T0 + 4510, json: pet }));
  recorder.record(
    makeAttempt(op('createPet'), {
      sentAt: T0 + 5200,
      receivedAt: T0 + 5201,
      status: 0,
      errorCode: 'UND_ERR_HEADERS_TIMEOUT',
      headers: undefined,
    }),
  );
  recorder.measure(false);
  input = {
    meta: syntheticMeta({ scenario: 'unit', description: 'synthetic attempts' }),
    config: syntheticConfig({
      workload: {
        executor: 'constant-vus',
        vus: 2,
        durationMs: 10_000,
        thinkMs: [0, 0],
        iterations: undefined,
      },
    }),
    recorder,
    operations: ops,
    workload: {
      iterations: 11,
      droppedIterations: 0,
      failedIterations: 1,
      flows: { browse: { iterations: 11, failures: 1, firstError: 'boom' } },
    },
  };
  result = buildResult(input);
});

/**
 * A deep copy of the result with the value at `path` replaced (or deleted when `value` is omitted):
 * `broken('meta.target', 'x')`.
 */
function broken(path: string, ...value: [unknown?]): unknown {
  const copy = structuredClone(result) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  const last = keys.pop() as string;
  let node = copy;
  for (const k of keys) node = node[k] as Record<string, unknown>;
  if (value.length === 0) delete node[last];
  else node[last] = value[0];
  return copy;
}

describe('buildResult', () => {
  it('builds a result that follows the contract, also after a JSON round trip', () => {
    expect(resultProblem(result)).toBeUndefined();
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toBeUndefined();
  });

  it('summarises the recorder overall, per operation and for compliance', () => {
    expect(result.schemaVersion).toBe(1);
    expect(result.meta).toMatchObject({ tool: 'petstore-load', durationSeconds: 10, scenario: 'unit' });
    expect(result.overall).toMatchObject({
      requests: 11,
      rate: 1.1,
      statuses: { 200: 9, 429: 1 },
      rateLimited: 1,
      rateLimitedRate: 1 / 11,
      retries: 1,
      transportErrors: { UND_ERR_HEADERS_TIMEOUT: 1 },
      checkFailures: 2,
    });
    expect(result.overall.service.count).toBe(11);
    expect(Object.keys(result.operations).sort()).toEqual(['createPet', 'getPetById', 'listPets']);
    expect(result.operations.getPetById).toMatchObject({
      method: 'GET',
      path: '/pets/{petId}',
      deprecated: true,
      stability: 'stable',
      requests: 2,
      rateLimitedRate: 0.5,
      checkFailures: 2,
    });
    expect(result.operations.listPets).toMatchObject({ requests: 8, rate: 0.8, checkFailures: 0 });
    expect(result.compliance).toMatchObject({
      rateLimited: 1,
      retries: 1,
      violations: 1,
      // 9 admitted (8 listPets, 1 getPetById) over 10 s at the free plan's 1/s: 10 intervals, and
      // the request at the start.
      admitted: 9,
      planRate: 1,
      quotaUtilization: 9 / 11,
    });
    expect(result.compliance.violationSamples).toEqual([
      { operation: 'getPetById', sentAt: T0 + 4500, pauseUntil: T0 + 5110 },
    ]);
    expect(result.timeline.reduce((n, p) => n + p.requests, 0)).toBe(11);
    expect(result.checks.find((c) => c.id === 'deprecation-headers')).toMatchObject({
      passes: 0,
      failures: 2,
    });
    expect(result.workload).toBe(input.workload);
  });

  it('reports no plan rate and no utilisation without windows', () => {
    const r = buildResult({ ...input, config: { ...input.config, windows: [] } });
    expect(r.compliance.planRate).toBe(0);
    expect(r.compliance.quotaUtilization).toBe(0);
    expect(resultProblem(r)).toBeUndefined();
  });
});

describe('resultProblem', () => {
  it('reports a result that breaks the contract, naming where', () => {
    expect(resultProblem(broken('schemaVersion', 2))).toBe('/schemaVersion must be equal to constant');
    expect(resultProblem(broken('meta.target', 'http://user:pw@host'))).toMatch(
      /^\/meta\/target must match pattern/,
    );
    expect(resultProblem(broken('meta.target', 'http://host/path?key=secret'))).toMatch(
      /^\/meta\/target must match pattern/,
    );
    expect(resultProblem(broken('meta.tool', 'k6'))).toBe('/meta/tool must be equal to constant');
    expect(resultProblem(broken('meta.startedAt', 'yesterday'))).toMatch(
      /^\/meta\/startedAt must match format/,
    );
    expect(resultProblem(broken('compliance'))).toBe("(root) must have required property 'compliance'");
    expect(resultProblem(broken('overall.requests', -1))).toBe('/overall/requests must be >= 0');
    expect(resultProblem(broken('overall.statuses.0', 1))).toMatch(/^\/overall\/statuses/);
    expect(resultProblem(broken('compliance.rateLimitedRate', 1.5))).toBe(
      '/compliance/rateLimitedRate must be <= 1',
    );
    expect(resultProblem(broken('operations.listPets.stability', 'alpha'))).toMatch(
      /^\/operations\/listPets\/stability must be equal to one of the allowed values/,
    );
    expect(
      resultProblem(
        broken(
          'checks.0.samples',
          Array(6).fill({ operation: 'listPets', status: 200, detail: 'x', at: T0 }),
        ),
      ),
    ).toMatch(/^\/checks\/0\/samples must NOT have more than 5 items/);
    expect(resultProblem(broken('overall.histograms.service', 'not base64!'))).toMatch(
      /^\/overall\/histograms\/service must match pattern/,
    );
    expect(resultProblem(null)).toBe('(root) must be object');
    // The limiter's refusals by status, and what was counted apart, as counts.
    expect(resultProblem(broken('compliance.refusals.abc', 1))).toMatch(/^\/compliance\/refusals/);
    expect(resultProblem(broken('compliance.unexplained', -1))).toBe('/compliance/unexplained must be >= 0');
    expect(resultProblem(broken('overall.refusals.503', 0.5))).toMatch(/^\/overall\/refusals\/503/);
    expect(resultProblem(broken('config.refusalStatuses', [200]))).toMatch(
      /^\/config\/refusalStatuses\/0 must be >= 400/,
    );
  });

  it('accepts a target with a path but no credentials', () => {
    expect(resultProblem(broken('meta.target', 'https://api.example.com/v1'))).toBeUndefined();
  });
});

describe('compliance.headerDialect', () => {
  it('names the dialect every response with headers spoke, and the default contract', () => {
    // 10 responses (the transport error has no headers), all in the seed's dialect.
    expect(result.compliance.headerDialect).toEqual({
      contract: 'seed',
      detected: 'seed',
      alsoSent: [],
      counts: { seed: 10 },
    });
  });

  it("judges against the recorder's contract, and takes the client's reading of the quota as it is", () => {
    const recorder = new Recorder({
      startedAt: T0,
      windows: FREE_WINDOWS,
      checkOptions: { contract: 'ietf' },
    });
    const ietf8 = {
      'content-type': 'application/json',
      ratelimit: '"minute";r=59;t=30',
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
    };
    for (let i = 0; i < 3; i++)
      recorder.record(
        makeAttempt(op('listPets'), {
          sentAt: T0 + i * 100,
          receivedAt: T0 + i * 100 + 5,
          headers: ietf8,
          json: [],
        }),
      );
    // A record that carries its view (as the client's do): counted as it says, the headers not read again.
    const carried = makeAttempt(op('listPets'), {
      sentAt: T0 + 400,
      receivedAt: T0 + 405,
      headers: ietf8,
      json: [],
    });
    carried.rateLimitView = {
      dialect: 'ietf-7',
      alsoSent: ['seed'],
      limit: 60,
      remaining: 55,
      resetSeconds: 29,
      policies: [],
      malformed: [],
    };
    recorder.record(carried);
    const r = buildResult({ ...input, recorder });
    expect(resultProblem(r)).toBeUndefined();
    expect(r.compliance.headerDialect).toEqual({
      contract: 'ietf',
      detected: 'ietf-8',
      alsoSent: ['seed'],
      counts: { 'ietf-8': 3, 'ietf-7': 1 },
    });
    const check = (id: string) => r.checks.find((c) => c.id === id);
    expect(check('ratelimit-dialect-matches-contract')).toMatchObject({ passes: 4, failures: 0 });
    expect(check('ratelimit-headers-present')).toMatchObject({ passes: 4, failures: 0 });
  });

  it('is absent when no response was checked, and refused by the schema when it names what is not a dialect', () => {
    const silent = buildResult({
      ...input,
      recorder: new Recorder({ startedAt: T0, windows: FREE_WINDOWS }),
    });
    expect(silent.compliance.headerDialect).toBeUndefined();
    expect(resultProblem(silent)).toBeUndefined();
    expect(resultProblem(broken('compliance.headerDialect.detected', 'ietf-9'))).toMatch(
      /^\/compliance\/headerDialect\/detected must be equal to one of the allowed values/,
    );
    expect(resultProblem(broken('compliance.headerDialect.counts', { seed: 1, xml: 2 }))).toMatch(
      /^\/compliance\/headerDialect\/counts/,
    );
    expect(resultProblem(broken('compliance.headerDialect.extra', true))).toMatch(/additional properties/);
    expect(resultProblem(broken('config.contract', 'ietf-9'))).toMatch(/^\/config\/contract/);
  });

  it("the schema's dialects and contracts are the code's", () => {
    const schema = JSON.parse(
      readFileSync(new URL('../../src/result/result.schema.json', import.meta.url), 'utf8'),
    );
    expect(schema.definitions.dialect.enum).toEqual([...DIALECTS]);
    expect(schema.definitions.dialectOrNone.enum).toEqual([...DIALECTS, 'none']);
    expect(schema.definitions.contract.enum).toEqual([...CONTRACTS]);
  });
});

describe('quota', () => {
  /** The free key paced to a spent window, a 429 paused for 2 s by its Retry-After, then a new window. */
  function quotaResult(): RunResult {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
    recorder.measure(true, T0);
    const remaining = (at: number, left: number) =>
      okHeaders(at, { 'x-ratelimit-remaining': String(left), 'x-ratelimit-reset': String(T0 / 1000 + 3) });
    for (let i = 0; i < 4; i++) {
      const at = T0 + i * 500 + 10;
      recorder.record(
        makeAttempt(op('listPets'), {
          receivedAt: at,
          sentAt: at - 10,
          json: [pet],
          headers: remaining(at, 3 - i),
        }),
      );
    }
    const at = T0 + 2010;
    recorder.record(
      makeAttempt(op('listPets'), {
        sentAt: at - 10,
        receivedAt: at,
        status: 429,
        json: errorBody(429, 'rate_limited'),
        headers: { ...remaining(at, 0), 'retry-after': '2' },
        pauseUntil: at + 2005,
        retried: true,
      }),
    );
    recorder.record(
      makeAttempt(op('listPets'), {
        sentAt: T0 + 4020,
        receivedAt: T0 + 4030,
        json: [pet],
        headers: okHeaders(T0 + 4030, { 'x-ratelimit-remaining': '59' }),
      }),
    );
    recorder.measure(false, T0 + 5000);
    return buildResult({ ...input, recorder });
  }

  it('gives per key the Remaining per second, the new window and the pause the client kept', () => {
    const r = quotaResult();
    expect(r.quota).toEqual([
      {
        key: 'free',
        limit: 60,
        points: [
          { t: 0, requests: 2, rateLimited: 0, remainingMin: 2, remainingLast: 2 },
          { t: 1, requests: 2, rateLimited: 0, remainingMin: 0, remainingLast: 0 },
          { t: 2, requests: 1, rateLimited: 1, remainingMin: 0, remainingLast: 0 },
          { t: 4, requests: 1, rateLimited: 0, remainingMin: 59, remainingLast: 59, reset: true },
        ],
        pauses: [{ from: 2.01, until: 4.015, by: 'retry-after', rateLimited: 1 }],
      },
    ]);
    expect(resultProblem(r)).toBeUndefined();
    expect(resultProblem(JSON.parse(JSON.stringify(r)))).toBeUndefined();
  });

  it('is optional (results of older versions), and the schema refuses what it does not define', () => {
    const r = quotaResult();
    const without = structuredClone(r);
    delete without.quota;
    expect(resultProblem(without)).toBeUndefined();
    const breaking = (patch: (q: NonNullable<RunResult['quota']>) => void) => {
      const copy = structuredClone(r);
      patch(copy.quota as NonNullable<RunResult['quota']>);
      return resultProblem(copy);
    };
    expect(breaking((q) => Object.assign(q[0]?.points[0] ?? {}, { reset: false }))).toMatch(
      /^\/quota\/0\/points\/0\/reset/,
    );
    expect(breaking((q) => Object.assign(q[0]?.points[0] ?? {}, { t: -1 }))).toMatch(
      /^\/quota\/0\/points\/0\/t/,
    );
    expect(breaking((q) => Object.assign(q[0]?.pauses[0] ?? {}, { by: 'guess' }))).toMatch(
      /^\/quota\/0\/pauses\/0\/by/,
    );
    expect(breaking((q) => Object.assign(q[0] ?? {}, { extra: 1 }))).toMatch(/additional properties/);
    expect(breaking((q) => Object.assign(q[0] ?? {}, { droppedPauses: 0 }))).toMatch(
      /^\/quota\/0\/droppedPauses/,
    );
    expect(
      breaking((q) => {
        const band = q[0]?.pauses[0] as NonNullable<RunResult['quota']>[number]['pauses'][number];
        (q[0] as { pauses: unknown[] }).pauses = Array.from({ length: 1001 }, () => band);
      }),
    ).toMatch(/^\/quota\/0\/pauses must NOT have more than 1000 items/);
    expect(breaking((q) => delete (q[0] as { key?: string }).key)).toMatch(/required property 'key'/);
  });
});
