import type { ValidateFunction } from 'ajv';
import { compileSchema, schemaValidator } from '../../api/ajv.ts';
import { findResponse, type Operation, type OperationResponse } from '../../api/operations.ts';
import type { SchemaDialect } from '../../api/schema-formats.ts';
import { type Check, SKIP } from './check.ts';

/**
 * Validating every body costs more than the request itself at high rates, so each operation's
 * bodies are validated up to `perSecond` per second and sampled beyond; the check's counts say how
 * many were validated. Each body is read in its document's schema dialect (OpenAPI 3.0's, or JSON
 * Schema 2020-12 for 3.1 and 3.2); formats no validator knows pass, and the result lists them.
 */
export function responseSchemaCheck(perSecond = 50): Check {
  const validators = new Map<SchemaDialect, ReturnType<typeof schemaValidator>>();
  const validatorOf = (dialect: SchemaDialect) => {
    let ajv = validators.get(dialect);
    if (!ajv) {
      ajv = schemaValidator(dialect, { strict: false, allErrors: false });
      validators.set(dialect, ajv);
    }
    return ajv;
  };
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
      const ajv = validatorOf(op.schemaDialect);
      let validate = compiled.get(response.schema);
      if (!validate) {
        validate = compileSchema(ajv, response.schema);
        compiled.set(response.schema, validate);
      }
      return validate(json) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'body' });
    },
  };
}
