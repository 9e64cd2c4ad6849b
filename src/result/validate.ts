import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { RunResult } from './types.ts';

const schema = JSON.parse(readFileSync(new URL('./result.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv({ allErrors: false, strict: false });
addFormats.default(ajv);
const validate = ajv.compile<RunResult>(schema);

/** Undefined when `value` follows the result contract, else the first problem in one line. */
export function resultProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  return `${e?.instancePath || '(root)'} ${e?.message ?? 'invalid'}`;
}
