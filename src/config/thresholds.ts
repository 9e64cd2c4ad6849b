import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { parseThreshold, type Threshold } from '../report/threshold-parse.ts';
import type { Scenario } from '../scenario/define.ts';

/**
 * The run's thresholds: the scenario's, then those of `--threshold`, all parsed before any traffic
 * so that a typo costs a second, not a whole run.
 */
export function collectThresholds(
  scenario: Scenario,
  cli: readonly string[],
  operations: ReadonlySet<string>,
  cliAbortOnFail: boolean,
  cliDelayAbortEvalMs = 0,
): Threshold[] {
  const declared = (scenario.thresholds ?? []).map((t) => {
    if (typeof t === 'string') return parseThreshold(t, 'scenario', operations);
    let delayAbortEvalMs = 0;
    if (t.delayAbortEval !== undefined) {
      try {
        delayAbortEvalMs = parseDuration(t.delayAbortEval, 'delayAbortEval');
      } catch (error) {
        throw new InputError(`threshold '${t.threshold}': ${(error as Error).message}`);
      }
    }
    return parseThreshold(t.threshold, 'scenario', operations, {
      abortOnFail: t.abortOnFail ?? false,
      delayAbortEvalMs,
    });
  });
  const given = cli.map((text) =>
    parseThreshold(text, 'cli', operations, {
      abortOnFail: cliAbortOnFail,
      delayAbortEvalMs: cliDelayAbortEvalMs,
    }),
  );
  return [...declared, ...given];
}
