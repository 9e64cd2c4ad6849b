import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { DEFAULT_PLANS, scalePlan } from '../../src/api/plans.ts';
import {
  buildTenantMix,
  keysPerPlan,
  mintedKey,
  mintedKeyTable,
  parseTenantsFile,
  specsFromKeys,
  validateTenantSpecs,
} from '../../src/api/tenants.ts';
import { tenantLoads } from '../../src/scenario/tenant-load.ts';

const windowsOf = (plan: string) => scalePlan(DEFAULT_PLANS[plan] as never, 10).windows;

describe('tenant mix', () => {
  it('names tenants by group and ordinal, unnamed groups of a plan as one tier, never by key', () => {
    const specs = validateTenantSpecs(
      [
        { plan: 'free', keys: 2 },
        { plan: 'pro', keys: 1 },
        { plan: 'free', keys: 3, enforce: false, name: 'abusive' },
        { plan: 'free', keys: 1 },
      ],
      DEFAULT_PLANS,
    );
    const mix = buildTenantMix(specs, windowsOf, (plan, n) => mintedKey('s', plan, n));
    expect(mix.tenants.map((t) => t.tenant.label)).toEqual([
      'free#1',
      'free#2',
      'pro#1',
      'abusive#1',
      'abusive#2',
      'abusive#3',
      'free#3',
    ]);
    expect(mix.tenants.map((t) => t.tenant.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const abusive = mix.groups[2]?.tenants[0]?.tenant;
    expect(abusive).toMatchObject({ named: true, enforce: false, plan: 'free', group: 'abusive' });
    // Every key distinct, and each the n-th minted key of its plan across the mix.
    expect(new Set(mix.tenants.map((t) => t.key)).size).toBe(7);
    expect(mix.tenants[6]?.key).toBe(mintedKey('s', 'free', 6));
    expect(JSON.stringify(mix.tenants.map((t) => t.tenant))).not.toContain(mix.tenants[0]?.key as string);
  });

  it('mints the same keys on both sides from a seed, and other keys from another seed', () => {
    const table = mintedKeyTable(
      'seed-a',
      keysPerPlan([
        { plan: 'pro', keys: 3 },
        { plan: 'pro', keys: 2 },
      ]),
    );
    expect(Object.keys(table)).toHaveLength(5);
    expect(table[mintedKey('seed-a', 'pro', 5)]).toBe('pro');
    expect(table[mintedKey('seed-b', 'pro', 1)]).toBeUndefined();
    for (const key of Object.keys(table)) expect(key).toMatch(/^[\x21-\x7e]+$/);
  });

  it('refuses a mix it cannot run, in one line', () => {
    const bad: [unknown, RegExp][] = [
      [[], /non-empty/],
      [[{ plan: 'gold', keys: 1 }], /plan 'gold' is not in the plan table/],
      [[{ plan: 'free', keys: 0 }], /keys must be a whole number >= 1/],
      [[{ plan: 'free', keys: 1, name: 'pro' }], /a plan's name/],
      [
        [
          { plan: 'free', keys: 1, name: 'x' },
          { plan: 'pro', keys: 1, name: 'x' },
        ],
        /used twice/,
      ],
      [[{ plan: 'free', keys: 1, colour: 'red' }], /unknown field 'colour'/],
      [[{ plan: 'free', keys: 200_000 }], /more than 100,000 keys/],
    ];
    for (const [specs, message] of bad) {
      const error = (() => {
        try {
          validateTenantSpecs(specs, DEFAULT_PLANS);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(InputError);
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain('\n');
    }
  });
});

describe('--tenants file', () => {
  it('reads CSV and JSON, keys from the environment, and groups them by plan and name', () => {
    const csv =
      'plan,key,name\n# a comment\nfree,k-free-1\npro,env:PRO_KEY\nfree,k-abuse-1,abusive\nfree,k-free-2\n';
    const keys = parseTenantsFile(csv, 'mix.csv', { PRO_KEY: 'k-pro-1' });
    expect(keys).toEqual([
      { plan: 'free', key: 'k-free-1' },
      { plan: 'pro', key: 'k-pro-1' },
      { plan: 'free', key: 'k-abuse-1', name: 'abusive' },
      { plan: 'free', key: 'k-free-2' },
    ]);
    const json = JSON.stringify(keys);
    expect(parseTenantsFile(json, 'mix.json', {})).toEqual(keys);
    const { specs, keyFor } = specsFromKeys(keys, DEFAULT_PLANS, [
      { plan: 'free', keys: 1, name: 'abusive', enforce: false, startTime: '5s' },
    ]);
    expect(specs).toEqual([
      { plan: 'free', keys: 2 },
      { plan: 'pro', keys: 1 },
      { plan: 'free', keys: 1, name: 'abusive', enforce: false, startTime: '5s' },
    ]);
    const mix = buildTenantMix(specs, windowsOf, keyFor);
    expect(mix.tenants.map((t) => [t.tenant.label, t.key])).toEqual([
      ['free#1', 'k-free-1'],
      ['free#2', 'k-free-2'],
      ['pro#1', 'k-pro-1'],
      ['abusive#1', 'k-abuse-1'],
    ]);
  });

  it('never quotes a key in its errors', () => {
    const secret = 'sk-live-0123456789';
    const cases = [
      `plan,key\nfree,${secret}\nfree,${secret}\n`,
      `plan,key\nfree,${secret} x\n`,
      `plan,key\ngold,${secret}\n`,
      // The columns in another order than the header names them: the key lands in `plan`.
      `plan,key\n${secret},free\n`,
      // JSON.parse's message quotes the text around the fault.
      `[{"plan":"free","key":"${secret}"},]`,
    ];
    for (const text of cases) {
      let message = '';
      try {
        const keys = parseTenantsFile(text, 'f.csv', {});
        specsFromKeys(keys, DEFAULT_PLANS);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain(secret);
    }
    expect(() => parseTenantsFile('plan,key\nfree,env:NOPE\n', 'f.csv', {})).toThrow(/NOPE is not set/);
    expect(() => parseTenantsFile('key\nx\n', 'f.csv', {})).toThrow(/first line must name the columns/);
  });
});

describe('tenant loads', () => {
  it("gives each group its keys' rate, a share being of each key's own plan, from its start", () => {
    const specs = validateTenantSpecs(
      [
        { plan: 'free', keys: 10 },
        { plan: 'pro', keys: 4, rate: 2 },
        { plan: 'free', keys: 2, name: 'loud', rate: '300%', startTime: '5s' },
      ],
      DEFAULT_PLANS,
    );
    const mix = buildTenantMix(specs, windowsOf, (p, n) => `${p}-${n}`);
    const loads = tenantLoads(mix, { executor: 'constant-arrival-rate', rate: '50%' }, {}, 'open');
    // Free at time scale 10 allows 10/s per key: 50% of it for 10 keys.
    expect(loads[0]?.rateAt(0)).toBeCloseTo(50);
    expect(loads[1]?.rateAt(0)).toBeCloseTo(8);
    expect(loads[2]?.rateAt(4999)).toBe(0);
    expect(loads[2]?.rateAt(5000)).toBeCloseTo(60);
    // Spread over two generators, each key falls to one of them.
    const halves = [1, 2].map((index) =>
      tenantLoads(mix, { executor: 'constant-arrival-rate', rate: '50%' }, {}, 'open', { index, count: 2 }),
    );
    const indexes = halves.flatMap((h) => h.flatMap((l) => l.tenants.map((t) => t.tenant.index)));
    expect(indexes.sort((a, b) => a - b)).toEqual(mix.tenants.map((t) => t.tenant.index));
    expect((halves[0]?.[0]?.rateAt(0) ?? 0) + (halves[1]?.[0]?.rateAt(0) ?? 0)).toBeCloseTo(50);
  });
});
