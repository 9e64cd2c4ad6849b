import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RunResult } from './types.ts';

let compiled: ValidateFunction<RunResult> | undefined;

/** Compiled on first use, not on import: a run that reads no result (no --baseline) never needs it. */
function validator(): ValidateFunction<RunResult> {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(new URL('./result.schema.json', import.meta.url), 'utf8'));
  const ajv = new Ajv({ allErrors: false, strict: false });
  addFormats.default(ajv);
  compiled = ajv.compile<RunResult>(schema);
  return compiled;
}

/** Undefined when `value` follows the result contract, else the first problem in one line. */
export function resultProblem(value: unknown): string | undefined {
  const validate = validator();
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  return `${e?.instancePath || '(root)'} ${e?.message ?? 'invalid'}`;
}
