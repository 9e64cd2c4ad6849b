import type { Options } from 'yargs';
import { InputError } from '../api/input-error.ts';
import { RESPONSE_RULES } from '../api/responses.ts';

/** The statuses a target's limiter refuses with, as `run`, `capacity` and `bench` all take them. */
export const REFUSAL_FLAGS = {
  'refusal-status': {
    requiresArg: true,
    type: 'array',
    string: true,
    describe: `A status the target's limiter refuses with besides ${RESPONSE_RULES.alwaysRefusal}, counted and backed off as its refusal whatever it carries (repeatable). Without it a ${RESPONSE_RULES.refusalWithSign.join(' or ')} is a refusal only with Retry-After or rate-limit fields saying none remain, and a bare ${RESPONSE_RULES.ambiguous} is kept away from but counted apart, as unexplained`,
  },
} as const satisfies Record<string, Options>;

/** `--refusal-status 503 --refusal-status 403` (or `503,403`): 4xx and 5xx statuses, each once. */
export function parseRefusalStatuses(values: readonly (string | number)[] | undefined): number[] {
  const statuses = new Set<number>();
  for (const value of values ?? [])
    for (const part of String(value).split(',')) {
      const text = part.trim();
      const status = Number(text);
      if (!/^\d{3}$/.test(text) || status < 400 || status > 599)
        throw new InputError(`--refusal-status ${text}: want a 4xx or 5xx status, e.g. 503`);
      statuses.add(status);
    }
  return [...statuses].sort((a, b) => a - b);
}
