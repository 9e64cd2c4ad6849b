import { describe, expect, it } from 'vitest';
import { authRefusal, keyHint } from '../../src/cli/setup-failure.ts';
import { Secret } from '../../src/config/secret.ts';
import type { RunResult } from '../../src/result/types.ts';

/** What a setup refused for its key adds to its line, and what it leaves alone (a limiter's 403, a 500). */

const answered = (statuses: Record<string, number>, refusals: Record<string, number> = {}) =>
  ({ overall: { statuses, refusals } }) as unknown as RunResult;

describe('authRefusal', () => {
  it.each([
    ['createCategory answered 401', undefined, 401],
    ['setup failed: my own words', answered({ 200: 1, 401: 1 }), 401],
    ['createPet answered 403', undefined, 403],
    ['createPet answered 403', answered({ 200: 1, 403: 1 }), 403],
    // A 403 with a limiter's sign was counted a refusal: the quota's, not the key's.
    ['createPet answered 403', answered({ 403: 1 }, { 403: 1 }), undefined],
    ['createPet answered 500', answered({ 500: 1 }), undefined],
    ['createPet got no answer (ECONNREFUSED)', undefined, undefined],
  ] as const)('%s (%o): %s', (failure, result, status) => {
    expect(authRefusal(failure, result)).toBe(status);
  });
});

describe('keyHint', () => {
  const key = new Secret('k', 'PETSTORE_API_KEY');
  const own = { embedded: false, planName: 'free' };
  it('a 403 names the key and --refusal-status for a limiter that refuses bare', () => {
    expect(keyHint({ ...own, apiKey: key, tenants: undefined }, 'createPet answered 403', undefined)).toBe(
      ': the target refused the operation to the key from PETSTORE_API_KEY (403: a key without the right to it; a limiter that refuses with a bare 403 is named with --refusal-status 403); a key is given with --api-key or in PETSTORE_API_KEY',
    );
  });

  it("a tenant mix's keys come from its --tenants file", () => {
    const tenants = { file: 'keys.csv' } as never;
    expect(keyHint({ ...own, apiKey: undefined, tenants }, 'createCategory answered 401', undefined)).toBe(
      ": the target wants a key and none was given; a key is given with --api-key or in PETSTORE_API_KEY (a tenant's in --tenants keys.csv)",
    );
  });

  it('a key from the environment sent to the embedded server: its demo key is used without one', () => {
    const config = { embedded: true, planName: 'pro', apiKey: key, tenants: undefined };
    expect(keyHint(config, 'createCategory answered 401', undefined)).toBe(
      ": the target did not accept the key from PETSTORE_API_KEY; a key is given with --api-key or in PETSTORE_API_KEY; without either, the embedded server's demo key for pro is used",
    );
  });

  it('any other failure adds nothing', () => {
    expect(
      keyHint({ ...own, apiKey: key, tenants: undefined }, 'createPet answered 500', answered({ 500: 1 })),
    ).toBe('');
  });
});
