import { InputError } from '../api/input-error.ts';
import type { OperationSummary, RunResult } from '../result/types.ts';
import { SCHEMA_VERSION } from '../result/types.ts';
import { resultProblem } from '../result/validate.ts';
import { decodeOrRefuse } from './decode-histogram.ts';

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
  const result = value as RunResult;
  // The schema sees base64, not a histogram: decode each now, so that a damaged one is an input
  // error naming the file here, not a failure after a whole run (--baseline) or inside a report.
  const summaries: [string, OperationSummary][] = [
    ['overall', result.overall],
    ...Object.entries(result.operations).map(([id, s]): [string, OperationSummary] => [
      `operations.${id}`,
      s,
    ]),
  ];
  for (const [where, summary] of summaries) {
    for (const kind of ['service', 'response'] as const) {
      decodeOrRefuse(summary.histograms[kind], `${label}: ${where}.histograms.${kind}`).destroy();
    }
  }
  return result;
}
