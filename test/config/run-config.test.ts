import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import yargs from 'yargs';
import { demoKeyFor } from '../../src/api/demo-keys.ts';
import { DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { DEFAULT_SPEC_PATH } from '../../src/api/spec.ts';
import { runOptions } from '../../src/cli/command-options.ts';
import { configJson } from '../../src/config/print.ts';
import { type RunArgs, resolveRunConfig } from '../../src/config/run.ts';
import { printable } from '../../src/config/run-printable.ts';
import { CONTRACT_IETF } from '../helpers/fixtures.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

/** `run`'s flags as yargs parses them from a command line, then resolved with `env`. */
async function resolve(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const args = await yargs()
    .command('$0 [scenario]', 'run', runOptions)
    .strict()
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new Error(message);
    })
    .parseAsync(argv);
  return resolveRunConfig(args as unknown as RunArgs, env);
}

const printed = (config: Awaited<ReturnType<typeof resolve>>) =>
  JSON.parse(configJson(printable(config))) as Record<string, unknown>;

let dir: string;
let apiKeySpec: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-run-config-'));
  // Our own document with its one scheme turned into an apiKey in an `api_key` header, as the
  // Swagger Petstore 3 document has it.
  const document = parse(readFileSync(DEFAULT_SPEC_PATH, 'utf8')) as {
    components: { securitySchemes: Record<string, unknown> };
  };
  for (const name of Object.keys(document.components.securitySchemes))
    document.components.securitySchemes[name] = { type: 'apiKey', in: 'header', name: 'api_key' };
  apiKeySpec = join(dir, 'api-key.json');
  writeFileSync(apiKeySpec, JSON.stringify(document));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('resolveRunConfig', () => {
  it('resolves the plan, its scaled windows, the workload and the thresholds into one object', async () => {
    const config = await resolve(
      ['catalogue-browse', '--plan', 'pro', '--duration', '3s', '--threshold', 'p99<300ms', '--seed', '7'],
      { PETSTORE_API_KEY: 'secret-xyz' },
    );
    expect(config.planName).toBe('pro');
    expect(config.windows).toEqual(scalePlan(getPlan(DEFAULT_PLANS, 'pro'), 10).windows);
    expect(config.workload.durationMs).toBe(3000);
    expect(config.seed).toBe(7);
    expect(config.thresholds.map((t) => t.expression)).toContain('p99<300ms');
    expect(Object.isFrozen(config)).toBe(true);
    const out = printed(config);
    expect(out.windows).toEqual(config.windows);
    expect(out.workload).toMatchObject({ kind: config.workload.kind, durationMs: 3000 });
    expect(out.thresholds).toContain('p99<300ms');
    expect(out.target).toBe('embedded reference server');
  });

  it('prints a seed only when --seed gave it: a drawn one is new on every run', async () => {
    const drawn = await resolve(['catalogue-browse']);
    expect(Number.isInteger(drawn.seed)).toBe(true);
    expect(printed(drawn).seed).toMatch(/random.*--seed/);
    expect(printed(await resolve(['catalogue-browse', '--seed', '9'])).seed).toBe(9);
  });

  it('holds the key as where it came from, and never prints it', async () => {
    const fromEnv = await resolve(['catalogue-browse', '--plan', 'pro'], { PETSTORE_API_KEY: 'secret-xyz' });
    expect(fromEnv.apiKey?.reveal()).toBe('secret-xyz');
    expect(configJson(printable(fromEnv))).not.toContain('secret-xyz');
    expect(printed(fromEnv).apiKey).toBe('from PETSTORE_API_KEY');

    const fromFlag = await resolve(['catalogue-browse', '--api-key', 'flag-key-123'], {
      PETSTORE_API_KEY: 'secret-xyz',
    });
    expect(fromFlag.apiKey?.reveal()).toBe('flag-key-123');
    expect(printed(fromFlag).apiKey).toBe('from --api-key');
    expect(configJson(printable(fromFlag))).not.toContain('flag-key-123');

    const demo = await resolve(['catalogue-browse', '--plan', 'business']);
    expect(demo.apiKey?.reveal()).toBe(demoKeyFor('business'));
    expect(printed(demo).apiKey).toMatch(/^from the embedded server's demo key/);
    expect(configJson(printable(demo))).not.toContain(demoKeyFor('business') as string);
  });

  it('shows the target without its credentials', async () => {
    const config = await resolve([
      'catalogue-browse',
      '--base-url',
      'http://user:pw-secret@127.0.0.1:9/api/',
    ]);
    expect(printed(config).target).toBe('http://127.0.0.1:9/api');
    expect(configJson(printable(config))).not.toContain('pw-secret');
    expect(printed(config).apiKey).toBe('none');
  });

  it("places the key per operation from the document's scheme, and --auth-header over all", async () => {
    const ours = await resolve(['catalogue-browse']);
    expect(ours.auth.get('listPets')).toMatchObject({ in: 'header', name: 'authorization', bearer: true });

    const apiKey = await resolve(['catalogue-browse', '--spec', apiKeySpec]);
    expect(apiKey.auth.get('listPets')).toMatchObject({ in: 'header', name: 'api_key', bearer: false });
    expect((printed(apiKey).auth as Record<string, string>).listPets).toMatch(/^header api_key \(/);

    const over = await resolve(['catalogue-browse', '--spec', apiKeySpec, '--auth-header', 'X-Api-Key']);
    expect(over.authHeader).toEqual({ in: 'header', name: 'x-api-key', bearer: false });
    expect([...over.auth.values()].every((a) => a.name === 'x-api-key' && a.from === '--auth-header')).toBe(
      true,
    );
    expect(over.auth.size).toBe(apiKey.auth.size);
    expect(printed(over).authHeader).toBe('header x-api-key');

    const bearer = await resolve(['catalogue-browse', '--auth-header', 'Authorization']);
    expect(bearer.authHeader).toMatchObject({ name: 'authorization', bearer: true });
  });

  it('judges rate-limit headers by a --spec of your own, shown per operation and status; --contract overrides', async () => {
    const ours = await resolve(['catalogue-browse']);
    expect(ours.contract).toBe('seed');
    expect(printed(ours).declaredContract).toBeUndefined();
    expect((await resolve(['catalogue-browse', '--spec', DEFAULT_SPEC_PATH])).contract).toBe('seed');

    const theirs = await resolve(['catalogue-browse', '--spec', CONTRACT_IETF]);
    expect(theirs.contract).toBe('document');
    expect(printed(theirs).contract).toBe('document');
    expect(printed(theirs).declaredContract).toEqual({
      listBookings: {
        '200': 'ietf-7 (RateLimit)',
        '400': 'ietf-7 (RateLimit)',
        '429': 'ietf-7 (RateLimit), Retry-After',
      },
      createBooking: {
        '201': 'not declared',
        '400': 'ietf-7 (RateLimit)',
        '429': 'ietf-7 (RateLimit), Retry-After',
      },
      deleteBooking: { '204': 'not declared', '429': 'ietf-7 (RateLimit), Retry-After' },
    });

    const over = await resolve(['catalogue-browse', '--spec', CONTRACT_IETF, '--contract', 'ietf']);
    expect(over.contract).toBe('ietf');
    expect(printed(over).declaredContract).toBeUndefined();
    // Asked for by name, the document's contract reads our own document too: the seed's, per status.
    const named = printed(await resolve(['catalogue-browse', '--contract', 'document']));
    expect((named.declaredContract as Record<string, Record<string, string>>).listPets?.['200']).toBe(
      'seed (X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset)',
    );
  });

  it("never prints the embedded server's minting seed, only that it mints the tenants' keys", async () => {
    const config = await resolve(['tenant-mix', '--duration', '2s']);
    const seed = config.tenants?.minted?.seed as string;
    expect(seed).toMatch(/^[0-9a-f]{32}$/);
    const text = configJson(printable(config));
    expect(text).not.toContain(seed);
    for (const key of config.tenants?.mix.tenants.map((t) => t.key) ?? []) expect(text).not.toContain(key);
    expect(printed(config).tenantKeys).toBe('minted by the embedded server');
  });

  it("prints a ramp's stages as --duration cuts or holds them, so two durations print two workloads", async () => {
    // shopper-checkout ramps 1 -> 6 VUs over 8 s, holds 6 for 8 s, then 6 -> 0 over 4 s: 20 s in all.
    const short = printed(await resolve(['shopper-checkout', '--duration', '5s'])).workload;
    const long = printed(await resolve(['shopper-checkout', '--duration', '60s'])).workload;
    const declared = printed(await resolve(['shopper-checkout'])).workload;
    expect(declared).toMatchObject({
      durationMs: 20_000,
      stages: [
        { target: 6, ms: 8000 },
        { target: 6, ms: 8000 },
        { target: 0, ms: 4000 },
      ],
    });
    // Cut 5 s into the first stage: 1 + 5 * (6 - 1) / 8 VUs reached when the run ends.
    expect(short).toMatchObject({ durationMs: 5000, stages: [{ target: 4.125, ms: 5000 }] });
    // Past the last stage the ramp holds its last target (0 VUs) for the 40 s left.
    expect(long).toMatchObject({
      durationMs: 60_000,
      stages: [
        { target: 6, ms: 8000 },
        { target: 6, ms: 8000 },
        { target: 0, ms: 4000 },
        { target: 0, ms: 40_000 },
      ],
    });
  });

  it('--limiter concurrency:N says that N must be a whole number >= 1, quoting what was typed', async () => {
    for (const n of ['0', '1.5', 'x', '4:5'])
      await expect(resolve(['catalogue-browse', '--limiter', `concurrency:${n}`])).rejects.toThrow(
        `--limiter 'concurrency:${n}': the requests in flight at most must be a whole number >= 1, not '${n}'`,
      );
    await expect(resolve(['catalogue-browse', '--limiter', 'gcra:4'])).rejects.toThrow(
      /'gcra:4': only concurrency takes a number/,
    );
    expect((await resolve(['catalogue-browse', '--limiter', 'concurrency:3'])).limiter).toEqual({
      kind: 'concurrency',
      maxInFlight: 3,
    });
  });

  it('reads --baseline once and keeps it parsed; --print-config shows where it is, not what it holds', async () => {
    const file = join(dir, 'baseline.json');
    writeFileSync(file, JSON.stringify(await syntheticResult(ladder('listPets', 20), { scenario: 'kept' })));
    const config = await resolve(['catalogue-browse', '--baseline', file, '--max-regression', 'p99=10%']);
    expect(config.baseline?.result.meta.scenario).toBe('kept');
    expect(config.baseline?.result.overall.requests).toBe(20);
    expect(printed(config).baseline).toEqual({ file, maxRegression: 'p99=10%' });
  });

  it('refuses a bad flag with an input error naming it', async () => {
    await expect(resolve(['catalogue-browse', '--auth-header', 'bad header'])).rejects.toThrow(
      /--auth-header/,
    );
    await expect(resolve(['catalogue-browse', '--max-regression', 'p95=10%'])).rejects.toThrow(
      /--max-regression needs --baseline/,
    );
    await expect(resolve(['catalogue-browse', '--timeout', '10'])).rejects.toThrow(/--timeout/);
    await expect(resolve(['catalogue-browse', '--workers', '0'])).rejects.toThrow(/--workers/);
    await expect(resolve(['catalogue-browse', '--base-url', 'ftp://x'])).rejects.toThrow(/--base-url/);
    await expect(resolve(['catalogue-browse', '--plan', 'nope'])).rejects.toThrow(/nope/);
  });
});
