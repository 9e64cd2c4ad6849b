import type { RunResult } from '../result/types.ts';

/**
 * What a benchmark that met 429s must say: its figures measure the key's rate limiter, not the API.
 * Undefined when there were none.
 */
export function rateLimitWarning(result: RunResult): string | undefined {
  const { rateLimited, requests } = result.overall;
  if (rateLimited === 0) return undefined;
  const share = ((rateLimited / requests) * 100).toFixed(1);
  return `WARNING: ${rateLimited} of ${requests} responses (${share}%) were 429 Too Many Requests: ${result.meta.plan === 'unknown' ? 'the' : `the ${result.meta.plan}`} key's rate limit held this benchmark back, so its figures measure the limiter, not the API. A throughput benchmark wants an unlimited or enterprise key (without --base-url, bench uses the embedded server's enterprise key, with no limit).`;
}

/**
 * Puts the warning where every reader of the result meets it first: at the head of meta.description,
 * which the HTML report shows under its title, the configuration table repeats, and merge keeps.
 * Returns the warning for the command to print.
 */
export function markRateLimited(result: RunResult): string | undefined {
  const warning = rateLimitWarning(result);
  if (warning) result.meta.description = `${warning} ${result.meta.description ?? ''}`.trim();
  return warning;
}
