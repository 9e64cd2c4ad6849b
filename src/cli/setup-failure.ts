import type { RunConfig } from '../config/run.ts';
import type { RunResult } from '../result/types.ts';

/**
 * A setup refused for its key (401, or a 403 the classifier does not read as the limiter's): which
 * status, from the failure's line (`createCategory answered 401`) or from setup's answers.
 */
export function authRefusal(failure: string, result: RunResult | undefined): 401 | 403 | undefined {
  const statuses = result?.overall.statuses ?? {};
  if (/answered 401\b/.test(failure) || (statuses['401'] ?? 0) > 0) return 401;
  // A 403 that carried a limiter's sign was classified a refusal: the quota's doing, not the key's.
  const bare = (statuses['403'] ?? 0) - (result?.overall.refusals?.['403'] ?? 0);
  if (/answered 403\b/.test(failure) && (result === undefined || bare > 0)) return 403;
  return undefined;
}

/**
 * What a setup refused for its key adds to its line: where the key came from, and where a key
 * comes from (`--api-key`, `PETSTORE_API_KEY`; a tenant mix's from its `--tenants` file). Empty for
 * any other failure.
 */
export function keyHint(
  config: Pick<RunConfig, 'apiKey' | 'tenants' | 'embedded' | 'planName'>,
  failure: string,
  result: RunResult | undefined,
): string {
  const status = authRefusal(failure, result);
  if (status === undefined) return '';
  const tenants = config.tenants?.file ? ` (a tenant's in --tenants ${config.tenants.file})` : '';
  // A key exported for one's own target reaches the embedded server too, which knows only its demo keys.
  const demo = config.embedded
    ? `; without either, the embedded server's demo key for ${config.planName} is used`
    : '';
  const sources = `a key is given with --api-key or in PETSTORE_API_KEY${tenants}${demo}`;
  const refused =
    status === 401
      ? config.apiKey
        ? `the target did not accept the key from ${config.apiKey.from}`
        : 'the target wants a key and none was given'
      : `the target refused the operation to ${config.apiKey ? `the key from ${config.apiKey.from}` : 'a request without a key'} (403: a key without the right to it; a limiter that refuses with a bare 403 is named with --refusal-status 403)`;
  return `: ${refused}; ${sources}`;
}
