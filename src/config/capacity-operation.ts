import { InputError } from '../api/input-error.ts';
import { nearest } from '../api/nearest-name.ts';
import type { Operation, OperationParameter } from '../api/operations.ts';
import { describeProbed, type ProbedOperation, petStoreProbe } from '../capacity/probed-operation.ts';

/** What `capacity` is told of the operation it probes. */
export interface ProbeFlags {
  spec?: string | undefined;
  operation?: string | undefined;
  param?: readonly string[] | undefined;
}

/** Operations named in a message at most; the rest are counted. */
const LISTED = 6;

/**
 * The one request `capacity` probes with, decided here and nowhere else: the pet store's page of
 * one pet without `--spec`; with it, `--operation ID` or the document's default (below), its path
 * and query values from `--param NAME=VALUE`, else from the document. `operations` carry the key's
 * placement already (`--auth-header` applied).
 */
export function resolveProbe(flags: ProbeFlags, operations: readonly Operation[]): ProbedOperation {
  if (flags.spec === undefined) {
    for (const [given, flag] of [
      [flags.operation, '--operation'],
      [flags.param?.length ? flags.param : undefined, '--param'],
    ] as const)
      if (given !== undefined)
        throw new InputError(
          `${flag} names an operation of your own document: give --spec FILE too (without it capacity probes the pet store's listPets)`,
        );
    return petStoreProbe(operations);
  }
  const given = parseParams(flags.param ?? []);
  const operation =
    flags.operation === undefined
      ? defaultOperation(operations, flags.spec, given)
      : namedOperation(operations, flags.spec, flags.operation);
  const how = flags.operation === undefined ? 'chosen by default' : 'named by --operation';
  const values = valuesOf(operation, given);
  if (values.unknown.length > 0)
    throw new InputError(
      `--param ${values.unknown.join(', ')}: ${describeProbed(operation)}, ${how}, has no such path or query parameter (${paramNames(operation)})`,
    );
  if (values.unsent.length > 0)
    throw new InputError(
      `${describeProbed(operation)} requires the ${values.unsent.join(', ')} parameter, and capacity sends no header or cookie but the key: name another with --operation ID`,
    );
  if (values.missing.length > 0)
    throw new InputError(
      `${describeProbed(operation)}, ${how}, needs a value for ${values.missing.join(', ')}, and the document gives no example, default or enum: give --param NAME=VALUE`,
    );
  return { operation, input: values.input };
}

/** `--param NAME=VALUE`, repeatable: a value of the probed operation's path or query parameter. */
export function parseParams(texts: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const text of texts) {
    const at = text.indexOf('=');
    if (at <= 0) throw new InputError(`--param: expected NAME=VALUE, got '${text}'`);
    const name = text.slice(0, at);
    if (params.has(name)) throw new InputError(`--param ${name} is given twice`);
    params.set(name, text.slice(at + 1));
  }
  return params;
}

/**
 * A safe GET of the document: no request body it requires, no header or cookie parameter it
 * requires (capacity sends neither), and every `--param` one of its parameters. The first that
 * needs no value beyond `--param`, else the first whose values the document gives; one not
 * deprecated before one that is, else in the document's order.
 */
function defaultOperation(
  operations: readonly Operation[],
  spec: string,
  given: ReadonlyMap<string, string>,
) {
  const gets = operations.filter(
    (op) => op.method === 'GET' && !op.requestBody?.required && valuesOf(op, given).unsent.length === 0,
  );
  if (gets.length === 0)
    throw new InputError(
      `--spec ${spec} has no GET operation to probe by default (one with no required body or header): name one with --operation ID (${listed(operations)})`,
    );
  const taking = gets.filter((op) => valuesOf(op, given).unknown.length === 0);
  if (taking.length === 0)
    throw new InputError(
      `--param ${[...given.keys()].join(', ')}: no GET operation of --spec ${spec} takes ${given.size > 1 ? 'them all' : 'it'}: name the operation with --operation ID (${listed(gets)})`,
    );
  const byPreference = [...taking].sort((a, b) => Number(a.deprecated) - Number(b.deprecated));
  const fillable = byPreference.filter((op) => valuesOf(op, given).missing.length === 0);
  const chosen = fillable.find((op) => valuesOf(op, given).fromDocument === 0) ?? fillable[0];
  if (chosen) return chosen;
  const needs = taking
    .slice(0, LISTED)
    .map((op) => `${op.id}: ${valuesOf(op, given).missing.join(', ')}`)
    .join('; ');
  throw new InputError(
    `--spec ${spec}: every GET operation needs parameter values the document does not give (${needs}${taking.length > LISTED ? `; and ${taking.length - LISTED} more` : ''}): name one with --operation ID and give its values with --param NAME=VALUE`,
  );
}

function namedOperation(operations: readonly Operation[], spec: string, id: string): Operation {
  const found = operations.find((op) => op.id === id);
  if (found) {
    if (found.requestBody?.required)
      throw new InputError(
        `--operation ${id}: ${describeProbed(found)} requires a request body, and capacity sends none: name one without (${listed(operations.filter((op) => !op.requestBody?.required))})`,
      );
    return found;
  }
  const near = nearest(
    id,
    operations.map((op) => op.id),
  );
  throw new InputError(
    `--operation '${id}': no such operation in ${spec}${near ? `; did you mean '${near}'?` : ''} (${listed(operations)})`,
  );
}

interface Values {
  input: ProbedOperation['input'];
  /** Required path and query parameters with no value from `--param` nor the document. */
  missing: string[];
  /** Required header and cookie parameters: nothing capacity sends. */
  unsent: string[];
  /** `--param` names that are none of the operation's path and query parameters. */
  unknown: string[];
  /** Values taken from the document's examples, defaults and enums. */
  fromDocument: number;
}

/** An operation's path and query values: `--param`'s, else, for a required one, the document's. */
function valuesOf(op: Operation, given: ReadonlyMap<string, string>): Values {
  const out: Values = {
    input: { path: {}, query: {} },
    missing: [],
    unsent: [],
    unknown: [],
    fromDocument: 0,
  };
  const sent = op.parameters.filter((p) => p.in === 'path' || p.in === 'query');
  for (const p of op.parameters)
    if (p.required && p.in !== 'path' && p.in !== 'query') out.unsent.push(`${p.in} ${p.name}`);
  for (const name of given.keys()) if (!sent.some((p) => p.name === name)) out.unknown.push(name);
  for (const p of sent) {
    let value = given.get(p.name);
    if (value === undefined && p.required) {
      value = documentValue(p);
      if (value !== undefined) out.fromDocument++;
    }
    if (value === undefined) {
      if (p.required) out.missing.push(p.name);
      continue;
    }
    if (p.in === 'path') out.input.path[p.name] = value;
    else (out.input.query as Record<string, string>)[p.name] = value;
  }
  return out;
}

/**
 * A value the document gives for a parameter: its own `example` or `examples`, its schema's
 * `example`, `examples` (OpenAPI 3.1), `default`, or first `enum` value. Only a string, a number or a
 * boolean: an array's or an object's serialisation depends on the parameter's style.
 */
export function documentValue(p: OperationParameter): string | undefined {
  const schema = p.schema ?? {};
  const first = (list: unknown) => (Array.isArray(list) ? list[0] : undefined);
  for (const value of [p.example, schema.example, first(schema.examples), schema.default, first(schema.enum)])
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      return String(value);
  return undefined;
}

function paramNames(op: Operation): string {
  const names = op.parameters.filter((p) => p.in === 'path' || p.in === 'query').map((p) => p.name);
  return names.length > 0 ? `its parameters: ${names.join(', ')}` : 'it takes none';
}

/** A few operations by id, for a message: `operations: a, b, c and 4 more`. */
function listed(operations: readonly Operation[]): string {
  const ids = operations.slice(0, LISTED).map((op) => op.id);
  const more = operations.length - ids.length;
  return `operations: ${ids.join(', ') || 'none'}${more > 0 ? ` and ${more} more` : ''}`;
}
