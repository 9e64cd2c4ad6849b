import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { DEFAULTS } from '../../src/api/defaults.ts';
import { InputError } from '../../src/api/input-error.ts';
import { DEFAULT_PLANS, planRate, scalePlan } from '../../src/api/plans.ts';
import { capacityOptions } from '../../src/cli/command-options.ts';
import { type CapacityConfig, resolveCapacityConfig } from '../../src/config/capacity.ts';
import { CAPACITY_DEFAULTS, type CapacityArgs } from '../../src/config/capacity-flags.ts';
import { printable } from '../../src/config/capacity-print.ts';
import { configJson } from '../../src/config/print.ts';

/** The flags as the CLI parses them: capacity's own option table, strict. */
function parse(argv: string[]): CapacityArgs {
  return capacityOptions(yargs(argv).strict().exitProcess(false)).parseSync() as CapacityArgs;
}

const resolveFlags = (argv: string[]): Promise<CapacityConfig> => resolveCapacityConfig(parse(argv));

describe('resolveCapacityConfig: the plan probes', () => {
  it('embedded, no flag: every plan with its demo key, time scale 10, a fast plan on a slower server', async () => {
    const c = await resolveFlags([]);
    if (c.mode !== 'plans') throw new Error('expected the plan probes');
    expect(c.baseUrl).toBeUndefined();
    expect(c.timeScale).toBe(DEFAULTS.embeddedTimeScale);
    expect(c.keys.map((k) => k.plan.name)).toEqual(Object.keys(DEFAULT_PLANS));
    for (const k of c.keys) {
      expect(k.key.reveal()).toBe(`${k.plan.name}-demo-key`);
      // Each plan at the asked scale unless that drives it past --max-rate.
      const rate = planRate(scalePlan(k.plan, k.timeScale).windows);
      expect(rate).toBeLessThanOrEqual(c.maxRate * (1 + 1e-9));
      if (planRate(scalePlan(k.plan, c.timeScale).windows) <= c.maxRate)
        expect(k.timeScale).toBe(c.timeScale);
      else expect(k.timeScale).toBeLessThan(c.timeScale);
    }
    expect(c.keys.some((k) => k.timeScale < c.timeScale)).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('--timeout takes a unit as run does; a bare number is refused naming the flag', async () => {
    expect((await resolveFlags(['--timeout', '10s'])).timeoutMs).toBe(10_000);
    expect((await resolveFlags(['--timeout', '750ms'])).timeoutMs).toBe(750);
    await expect(resolveFlags(['--timeout', '10'])).rejects.toThrow(InputError);
    await expect(resolveFlags(['--timeout', '10'])).rejects.toThrow(/^--timeout: '10' is not a duration/);
  });

  it('a given target: the keys given, scale 1, the key printed only as where it came from', async () => {
    const c = await resolveFlags(['--base-url', 'http://127.0.0.1:9/api/', '--api-key', 'pro=secret-xyz']);
    if (c.mode !== 'plans') throw new Error('expected the plan probes');
    expect(c.baseUrl?.href).toBe('http://127.0.0.1:9/api/');
    expect(c.keys.map((k) => [k.plan.name, k.timeScale, k.key.reveal()])).toEqual([['pro', 1, 'secret-xyz']]);
    const printed = configJson(printable(c));
    expect(printed).not.toContain('secret-xyz');
    const json = JSON.parse(printed);
    expect(json.plans.pro.key).toBe('from --api-key pro');
    expect(json.plans.pro.scaledWindows).toEqual(DEFAULT_PLANS.pro?.windows);
    expect(Object.keys(json.plans)).toEqual(['pro']);
  });

  it('--api-key gives a key per plan; --key, its former name, is now a client key file and refuses one without echoing it', async () => {
    const c = await resolveFlags([
      '--base-url',
      'http://127.0.0.1:9',
      '--api-key',
      'pro=k-pro',
      '--api-key',
      'free=k-free',
    ]);
    if (c.mode !== 'plans') throw new Error('expected the plan probes');
    expect(c.keys.map((k) => [k.plan.name, k.key.reveal()])).toEqual([
      ['pro', 'k-pro'],
      ['free', 'k-free'],
    ]);
    const refused = resolveFlags([
      '--base-url',
      'http://127.0.0.1:9',
      '--api-key',
      'pro=k',
      '--key',
      'pro=k-secret',
    ]);
    await expect(refused).rejects.toThrow(/^--key needs --cert: .*--api-key/);
    await expect(refused).rejects.not.toThrow(/k-secret/);
  });

  it.each([
    // A plan's name and a plan with its '=' are quoted as typed, never with an '=' that was not.
    [['--api-key', 'pro'], "--api-key: expected PLAN=KEY, got 'pro' (a plan with no '=KEY')"],
    [['--api-key', 'pro'], "--api-key: expected PLAN=KEY, got 'pro' (a plan with no '=KEY')"],
    [['--api-key', 'pro='], "--api-key: expected PLAN=KEY, got 'pro=' (no key after '=')"],
    // Anything else may be the key itself: described, not echoed.
    [['--api-key', 'sk-live-secret'], "--api-key: expected PLAN=KEY, got a value without '=' (not shown"],
    [['--api-key', '=sk-live-secret'], "--api-key: expected PLAN=KEY, got a value starting with '='"],
  ])('refuses %j saying what was typed', async (argv, message) => {
    const error = await resolveFlags(['--base-url', 'http://127.0.0.1:9', ...argv]).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(InputError);
    expect(error?.message.startsWith(message), error?.message).toBe(true);
    expect(error?.message).not.toContain('sk-live-secret');
    expect(error?.message).not.toContain('…');
  });

  it('--auth-header puts the key in that header for every operation, and the printed config says so', async () => {
    const c = await resolveFlags(['--auth-header', 'X-Api-Key']);
    expect(c.authHeader).toEqual({ in: 'header', name: 'x-api-key', bearer: false });
    for (const placement of c.auth.values()) expect(placement.from).toBe('--auth-header');
    expect(JSON.parse(configJson(printable(c))).auth).toEqual({
      listPets: { placement: 'header x-api-key', from: '--auth-header' },
    });
    const plain = await resolveFlags([]);
    expect(plain.authHeader).toBeUndefined();
    expect(plain.auth.get('listPets')).toMatchObject({ in: 'header', name: 'authorization', bearer: true });
    await expect(resolveFlags(['--auth-header', 'not a header'])).rejects.toThrow(/^--auth-header: /);
  });

  it.each([
    [['--step-duration', '5s'], /^--step-duration is a flag of capacity --tenants$/],
    [['--windows', '0'], /^--windows must be a whole number from 1 to 10$/],
    [['--base-url', 'ftp://x', '--api-key', 'pro=k'], /^--base-url must be http/],
    [['--base-url', 'http://127.0.0.1:9'], /^--api-key PLAN=KEY is required with --base-url$/],
    [
      ['--threshold', 'capacity.gold.accepted_per_minute>=1', '--api-key', 'pro=k'],
      /plan 'gold' is not probed/,
    ],
  ])('refuses %j with an input error naming the flag', async (argv, message) => {
    await expect(resolveFlags(argv)).rejects.toThrow(message);
  });
});

describe('resolveCapacityConfig: the tenant ramp', () => {
  it('reads and checks --tenants-file while resolving: its keys by plan, as where they came from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-load-capacity-config-'));
    try {
      const file = join(dir, 'keys.csv');
      writeFileSync(file, 'plan,key,name\nfree,k-free-1,\nfree,k-free-2,\npro,k-pro-1,big\n');
      const c = await resolveFlags([
        '--tenants',
        'free=2,pro=1',
        '--base-url',
        'http://127.0.0.1:9',
        '--tenants-file',
        file,
      ]);
      if (c.mode !== 'tenants') throw new Error('expected the tenant ramp');
      expect(c.tenantKeys?.byPlan.free?.map((k) => k.reveal())).toEqual(['k-free-1', 'k-free-2']);
      expect(c.tenantKeys?.max).toBe(3);
      const printed = configJson(printable(c));
      expect(printed).not.toMatch(/k-free|k-pro/);
      expect(JSON.parse(printed).tenantsInFile).toEqual({
        free: [`from --tenants-file ${file}, tenant 1`, `from --tenants-file ${file}, tenant 2`],
        pro: [`from --tenants-file ${file}, tenant 3 (big)`],
      });

      const withoutPro = join(dir, 'free-only.csv');
      writeFileSync(withoutPro, 'plan,key\nfree,k-free-1\n');
      const target = ['--base-url', 'http://127.0.0.1:9', '--tenants-file'];
      await expect(resolveFlags(['--tenants', 'free=2,pro=1', ...target, withoutPro])).rejects.toThrow(
        `--tenants-file ${withoutPro}: no key of plan 'pro'`,
      );
      await expect(
        resolveFlags(['--tenants', 'free', '--tenants-start', '2', ...target, withoutPro]),
      ).rejects.toThrow('its keys allow at most 1 tenants of the mix, fewer than --tenants-start 2');
      await expect(resolveFlags(['--tenants', 'free', ...target, join(dir, 'missing.csv')])).rejects.toThrow(
        /^--tenants-file .*missing\.csv: cannot read \(ENOENT\)$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('defaults: real quotas, steps of 5 s, up to 10,000 tenants, judged on p99', async () => {
    const c = await resolveFlags(['--tenants', 'free=4,pro=1']);
    if (c.mode !== 'tenants') throw new Error('expected the tenant ramp');
    expect(c.mix).toEqual({ free: 4, pro: 1 });
    expect(c.timeScale).toBe(1);
    expect(c.stepMs).toBe(5000);
    expect(c.maxTenants).toBe(CAPACITY_DEFAULTS.maxTenants);
    expect(c.start).toBe(1);
    expect(c.stepThresholdTexts).toEqual([CAPACITY_DEFAULTS.tenantThreshold]);
    expect(c.stepThresholds.map((t) => t.metric)).toEqual(['p99']);
    const json = JSON.parse(configJson(printable(c)));
    expect(json.stepMs).toBe(5000);
    expect(json.tenantKeys).toBe('minted by the embedded server');
    expect(Object.keys(json.auth).length).toBe(c.operations.length);
  });

  it.each([
    [['--tenants', 'pro', '--api-key', 'pro=k'], /^--api-key measures one key per plan/],
    [['--tenants', 'pro', '--api-key', 'pro=k'], /^--api-key measures one key per plan/],
    [['--tenants', 'pro', '--step-duration', '5'], /^--step-duration: '5' is not a duration/],
    [['--tenants', 'pro', '--step-duration', '100ms'], /^--step-duration must be from 500ms to 10m$/],
    [['--tenants', 'pro', '--base-url', 'http://127.0.0.1:9'], /needs --tenants-file/],
    [
      ['--tenants', 'pro', '--tenant-threshold', 'capacity.pro.accepted_per_minute>=1'],
      /a step is judged as a run is/,
    ],
  ])('refuses %j', async (argv, message) => {
    await expect(resolveFlags(argv)).rejects.toThrow(message);
  });
});
