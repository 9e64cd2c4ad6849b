import { InputError } from '../api/input-error.ts';
import type { RunResult } from '../result/types.ts';
import { SCHEMA_VERSION } from '../result/types.ts';
import { resultProblem } from '../result/validate.ts';

/**
 * A parsed result file as merge and compare accept it. The version is looked at first: a result of
 * another schemaVersion deserves "written by another version" rather than the schema's first complaint.
 */
export function resultFromJson(value: unknown, label: string): RunResult {
  const version =
    value !== null && typeof value === 'object'
      ? (value as { schemaVersion?: unknown }).schemaVersion
      : undefined;
  if (version === undefined) throw new InputError(`${label}: not a petstore-load result (no schemaVersion)`);
  if (version !== SCHEMA_VERSION)
    throw new InputError(
      `${label}: schemaVersion ${JSON.stringify(version)}; this petstore-load reads schemaVersion ${SCHEMA_VERSION}`,
    );
  const problem = resultProblem(value);
  if (problem) throw new InputError(`${label}: not a valid result: ${problem}`);
  return value as RunResult;
}
