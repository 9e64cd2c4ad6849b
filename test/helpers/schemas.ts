import { Ajv, type ValidateFunction } from 'ajv';
import { addOpenApiVocabulary } from '../../src/api/ajv.ts';
import { findResponse, type Operation } from '../../src/api/operations.ts';

const ajv = addOpenApiVocabulary(new Ajv({ strict: false, allErrors: true }));
const cache = new WeakMap<object, ValidateFunction>();

/** Validates a response body against the schema the operation declares for that status. */
export function responseErrors(op: Operation, status: number, body: unknown): string | undefined {
  const response = findResponse(op, status);
  if (!response) return `${op.id} declares no response for ${status}`;
  if (!response.schema) return body === '' ? undefined : `${op.id} ${status} declares no body but got one`;
  let validate = cache.get(response.schema);
  if (!validate) {
    validate = ajv.compile(response.schema);
    cache.set(response.schema, validate);
  }
  return validate(body) ? undefined : ajv.errorsText(validate.errors);
}
