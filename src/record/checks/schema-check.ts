import { Ajv, type ValidateFunction } from 'ajv';
import { addOpenApiVocabulary } from '../../api/ajv.ts';
import { findResponse, type Operation, type OperationResponse } from '../../api/operations.ts';
import { type Check, SKIP } from './check.ts';

/**
 * Validating every body costs more than the request itself at high rates, so each operation's
 * bodies are validated up to `perSecond` per second and sampled beyond; the check's counts say how
 * many were validated.
 */
export function responseSchemaCheck(perSecond = 50): Check {
  const ajv = addOpenApiVocabulary(new Ajv({ strict: false, allErrors: false }));
  const compiled = new WeakMap<object, ValidateFunction>();
  const budget = new Map<Operation, { second: number; used: number }>();
  // findResponse compares strings; a run sees a handful of (operation, status) pairs, so look each up once.
  const declared = new Map<Operation, Map<number, OperationResponse | null>>();
  return {
    id: 'response-schema',
    rule: `The body validates against the schema the operation declares for its status (up to ${perSecond} bodies per operation per second)`,
    source: 'the OpenAPI document',
    evaluate: ({ op, status, attempt }) => {
      let byStatus = declared.get(op);
      if (!byStatus) {
        byStatus = new Map();
        declared.set(op, byStatus);
      }
      let response = byStatus.get(status);
      if (response === undefined) {
        response = findResponse(op, status) ?? null;
        byStatus.set(status, response);
      }
      if (!response) return `${op.id} declares no response ${status}`;
      if (!response.schema)
        return attempt.body.text === '' ? undefined : `${op.id} ${status} declares no body`;
      const second = Math.floor(attempt.receivedAt / 1000);
      const spent = budget.get(op);
      if (spent && spent.second === second && spent.used >= perSecond) return SKIP;
      if (spent && spent.second === second) spent.used++;
      else budget.set(op, { second, used: 1 });
      const json = attempt.body.json;
      if (json === undefined) return 'body is not JSON';
      let validate = compiled.get(response.schema);
      if (!validate) {
        validate = ajv.compile(response.schema);
        compiled.set(response.schema, validate);
      }
      return validate(json) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'body' });
    },
  };
}
