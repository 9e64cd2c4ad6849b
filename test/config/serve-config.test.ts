import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { TENANT_SEED_ENV } from '../../src/api/tenants.ts';
import { configJson } from '../../src/config/print.ts';
import { resolveServeConfig, type ServeArgs, serverOptionsOf } from '../../src/config/serve.ts';

/** serve's one resolution: the flags' defaults, durations with units, refusals naming the flag. */

const DEFAULTS: ServeArgs = {
  host: '127.0.0.1',
  port: 0,
  timeScale: 1,
  seedData: 20,
  rateLimit: true,
  limiter: 'fixed',
  headers: 'seed',
  banAfter: 5,
  banDuration: '10m',
};

function refusal(args: Partial<ServeArgs>): string {
  try {
    resolveServeConfig({ ...DEFAULTS, ...args }, {});
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('resolved where a refusal was expected');
}

describe('resolveServeConfig', () => {
  it('durations with units become milliseconds', () => {
    const config = resolveServeConfig(
      { ...DEFAULTS, banDuration: '90s', faultLatency: '50ms', faultJitter: '1.5s', faultStall: '1s/10s' },
      {},
    );
    expect(config.server.banDurationMs).toBe(90_000);
    expect(config.server.faults?.latencyMs).toBe(50);
    expect(config.server.faults?.jitterMs).toBe(1500);
    expect(config.server.faults?.stall).toEqual({ forMs: 1000, everyMs: 10_000 });
  });

  it("the minted keys' seed comes from the environment only, and prints as where it came from", () => {
    const config = resolveServeConfig(
      { ...DEFAULTS, tenantKeys: 'free=2' },
      { [TENANT_SEED_ENV]: 'seed-xyz-9' },
    );
    expect(config.server.tenantKeys).toEqual({ free: 2 });
    expect(serverOptionsOf(config).tenantSeed).toBe('seed-xyz-9');
    const printed = configJson(config);
    expect(printed).not.toContain('seed-xyz-9');
    expect(JSON.parse(printed).tenantSeed).toBe(`from ${TENANT_SEED_ENV}`);
    // Without --tenant-keys the seed is not read at all.
    expect(resolveServeConfig(DEFAULTS, { [TENANT_SEED_ENV]: 'seed-xyz-9' }).tenantSeed).toBeUndefined();
  });

  it.each([
    [{ banDuration: '600' }, /^--ban-duration: '600' is not a duration/],
    [{ faultLatency: '50' }, /^--fault-latency: '50' is not a duration/],
    [{ faultJitter: '20' }, /^--fault-jitter: '20' is not a duration/],
    [{ faultStall: '1s' }, /^--fault-stall: '1s' is not D\/P/],
    [{ faultStall: '1/10s' }, /^--fault-stall: '1' is not a duration/],
    [{ timeScale: 0 }, /^--time-scale/],
    [{ sunset: 'soon' }, /^--sunset: 'soon' is not a date/],
    [{ tenantKeys: 'free=0' }, /^--tenant-keys: free=0/],
    [{ faultSharedBucket: '0' }, /^--fault-shared-bucket: '0'/],
    [{ faultErrorRate: 2 }, /^--fault-error-rate/],
  ] as [Partial<ServeArgs>, RegExp][])('refuses %j naming the flag', (args, message) => {
    expect(refusal(args)).toMatch(message);
  });
});
