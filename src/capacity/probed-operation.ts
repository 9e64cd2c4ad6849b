import type { RequestInput } from '../api/call-types.ts';
import type { Operation } from '../api/operations.ts';

/**
 * The one request a capacity probe sends, over and over: an operation of the target's document and
 * the values it goes with. The pet store's page of one pet by default; `capacity --spec` names one of
 * the user's own (src/config/capacity-operation.ts chooses it).
 */
export interface ProbedOperation {
  operation: Operation;
  /** Path parameters and query string, as the operation's template takes them. */
  input: Required<Pick<RequestInput, 'path' | 'query'>>;
}

/** `listPets` with a page of one pet: cheap, idempotent, and what every probe sent before `--spec`. */
export function petStoreProbe(operations: readonly Operation[]): ProbedOperation {
  const listPets = operations.find((op) => op.id === 'listPets');
  if (!listPets) throw new Error("the document has no 'listPets' operation to probe with");
  return { operation: listPets, input: { path: {}, query: { limit: 1 } } };
}

/** How the result and the messages name it: `GET /pets (listPets)`. */
export function describeProbed(operation: { id: string; method: string; path: string }): string {
  return `${operation.method} ${operation.path} (${operation.id})`;
}

/** The request as a person checks it: `GET /widgets/{widgetId} (getWidget) with widgetId=7, fields=summary`. */
export function describeRequest(probe: ProbedOperation): string {
  const values = [...Object.entries(probe.input.path), ...Object.entries(probe.input.query)].map(
    ([name, value]) => `${name}=${String(value)}`,
  );
  return `${describeProbed(probe.operation)}${values.length > 0 ? ` with ${values.join(', ')}` : ''}`;
}
