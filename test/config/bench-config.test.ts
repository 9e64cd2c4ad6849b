import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { InputError } from '../../src/api/input-error.ts';
import { KeyRequests } from '../../src/api/request.ts';
import { loadSpec } from '../../src/api/spec.ts';
import {
  type BenchArgs,
  type BenchConfig,
  benchOperations,
  resolveBenchConfig,
} from '../../src/config/bench.ts';
import { BENCH_FLAGS } from '../../src/config/bench-flags.ts';
import { configJson } from '../../src/config/print.ts';

/** bench's one resolution: defaults, refusals naming the flag, and a key that never prints. */

const DEFAULTS: BenchArgs = {
  operations: 'getPetById,listPets:3',
  duration: '10s',
  connections: 10,
  pipelining: 1,
  workers: 1,
  quiet: false,
};

async function refusal(args: Partial<BenchArgs>, env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    await resolveBenchConfig({ ...DEFAULTS, ...args }, env);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('resolved where a refusal was expected');
}

/** The headers bench's requests carry, one per operation of the built-in document. */
async function sentHeaders(config: BenchConfig): Promise<Record<string, string>[]> {
  const requests = new KeyRequests(config.apiKey.reveal());
  const operations = benchOperations(config, (await loadSpec()).operations);
  expect(operations.length).toBeGreaterThan(0);
  return operations.map((op) => requests.headers(op, false));
}

describe('resolveBenchConfig', () => {
  it('embedded by default: its own key, Bearer, flat out, the duration in ms', async () => {
    const config = await resolveBenchConfig(DEFAULTS, { PETSTORE_API_KEY: 'not-for-the-embedded-one' });
    expect(config.embedded).toBe(true);
    expect(config.apiKey.reveal()).toBe('enterprise-demo-key');
    expect(config.rate).toBeUndefined();
    expect(config.durationMs).toBe(10_000);
    for (const headers of await sentHeaders(config))
      expect(headers).toEqual({ authorization: 'Bearer enterprise-demo-key', accept: 'application/json' });
    expect(Object.isFrozen(config)).toBe(true);
    // PETSTORE_API_KEY is left for a target of one's own, and that is said, not done silently.
    expect(config.warnings).toEqual([
      expect.stringMatching(/^PETSTORE_API_KEY is not used without --base-url/),
    ]);
    expect((await resolveBenchConfig(DEFAULTS, {})).warnings).toEqual([]);
    expect(
      (await resolveBenchConfig({ ...DEFAULTS, apiKey: 'k' }, { PETSTORE_API_KEY: 'x' })).warnings,
    ).toEqual([]);
  });

  it('--api-key is the flag; --key, its former name, is now a client key file and refuses a key without echoing it', async () => {
    const parse = async (argv: string[]) =>
      (await yargs()
        .options(BENCH_FLAGS)
        .strict()
        .parseAsync(['--base-url', 'http://127.0.0.1:9', ...argv])) as unknown as BenchArgs;
    const config = await resolveBenchConfig(await parse(['--api-key', 'k-123']), {});
    expect(config.apiKey.reveal()).toBe('k-123');
    expect(JSON.parse(configJson(config)).apiKey).toBe('from --api-key');
    const refused = resolveBenchConfig(await parse(['--api-key', 'k', '--key', 'k-secret']), {});
    await expect(refused).rejects.toThrow(/^--key needs --cert: .*--api-key/);
    await expect(refused).rejects.not.toThrow(/k-secret/);
  });

  it('a target takes PETSTORE_API_KEY, --api-key over it; --auth-header puts it there as-is', async () => {
    const fromEnv = await resolveBenchConfig(
      { ...DEFAULTS, baseUrl: 'http://user:pw@127.0.0.1:9/api/', authHeader: 'X-Api-Key' },
      { PETSTORE_API_KEY: 'env-key-123' },
    );
    expect(fromEnv.apiKey.reveal()).toBe('env-key-123');
    expect(fromEnv.target).toBe('http://127.0.0.1:9/api');
    for (const headers of await sentHeaders(fromEnv))
      expect(headers).toEqual({ 'x-api-key': 'env-key-123', accept: 'application/json' });
    const printed = configJson(fromEnv);
    expect(printed).not.toContain('env-key-123');
    expect(printed).not.toContain('pw');
    expect(JSON.parse(printed).apiKey).toBe('from PETSTORE_API_KEY');

    const flag = await resolveBenchConfig(
      { ...DEFAULTS, baseUrl: 'http://127.0.0.1:9', apiKey: 'flag-key-456' },
      { PETSTORE_API_KEY: 'env-key-123' },
    );
    expect(flag.apiKey.reveal()).toBe('flag-key-456');
    expect(JSON.parse(configJson(flag)).apiKey).toBe('from --api-key');
  });

  it('keeps the operations of the document it loaded, printed as a count', async () => {
    const config = await resolveBenchConfig(DEFAULTS, {});
    expect(config.operations.map((op) => op.id)).toContain('listPets');
    expect(JSON.parse(configJson(config)).operations).toBe(`${config.operations.length} operations`);
  });

  it('a push URL with credentials prints as its kind and host', async () => {
    const config = await resolveBenchConfig({
      ...DEFAULTS,
      metrics: ['prometheus=http://me:hunter2@127.0.0.1:9090/api/v1/write'],
    });
    expect(config.metrics?.intervalMs).toBe(5000);
    const printed = configJson(config);
    expect(printed).not.toContain('hunter2');
    expect(JSON.parse(printed).metrics.sinks).toEqual(['prometheus 127.0.0.1:9090']);
  });

  it.each([
    [{ duration: '10' }, /^--duration: '10' is not a duration/],
    [{ duration: '50ms' }, /^--duration: '50ms' is too short/],
    [{ metrics: ['prometheus=http://127.0.0.1:9'], metricsInterval: '5' }, /^--metrics-interval: '5'/],
    [{ connections: 0 }, /^--connections: expected a whole number/],
    [{ workers: 11 }, /^--workers: expected a whole number from 1 to 10/],
    [{ rate: '10', pipelining: 2 }, /^--pipelining with --rate/],
    [{ rate: '2', workers: 3 }, /^--rate 2 cannot be shared by 3 workers/],
    [{ operations: 'createPet,deletePet', pipelining: 2 }, /^--pipelining 2: deletePet/],
    [{ operations: 'nope' }, /^--operations: unknown operation 'nope'/],
    [{ baseUrl: 'ftp://x' }, /^--base-url must be http/],
    [{ baseUrl: 'http://127.0.0.1:9' }, /^--base-url needs --api-key/],
    [{ authHeader: 'a b' }, /^--auth-header: 'a b' is not a header name/],
    [{ threshold: ['p99<<1'] }, /threshold|p99/],
  ] as [Partial<BenchArgs>, RegExp][])('refuses %j naming the flag', async (args, message) => {
    expect(await refusal(args)).toMatch(message);
  });
});
