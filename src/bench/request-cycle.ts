import type { HttpMethod, Operation } from '../api/operations.ts';
import { KeyRequests } from '../api/request.ts';
import { type CapturedCall, captureCall } from './capture-call.ts';
import type { MixEntry } from './operation-mix.ts';
import { CREATES, type Resource, STEPS, type StepIds } from './steps.ts';

/** The ids setup prepared on the target (src/scenario/catalogue.ts), and an order for getOrder. */
export interface BenchCatalogue {
  categoryIds: number[];
  petIds: number[];
  orderId?: number;
}

/**
 * One request of the cycle every connection walks through, as plain data (it crosses to worker
 * threads): autocannon sends it as it is, except a consumer's path, filled at send time.
 */
export interface BenchRequest {
  operationId: string;
  method: HttpMethod;
  /** Request target: base path, path and query (the key too, where the operation's scheme puts it there). */
  path: string;
  /** The key where the operation's scheme puts it, JSON asked for, and a body's type. */
  headers: Record<string, string>;
  /** JSON text, for operations with a body. */
  body?: string;
  /** A creator: the `id` of its 2xx response is what the next request of the connection uses. */
  provides?: Resource;
  /** A consumer: its target is `before + id + after`, the id being the one the request before created. */
  consumes?: { resource: Resource; before: string; after: string };
}

const MARK = '__created_id__';

/** A captured call as the cycle sends it, built as the client builds its requests (src/api/request.ts). */
function toRequest(
  call: CapturedCall,
  operations: ReadonlyMap<string, Operation>,
  basePath: string,
  requests: KeyRequests,
) {
  const op = operations.get(call.operationId);
  if (!op) throw new Error(`bench: operation '${call.operationId}' is not in the operation table`);
  // autocannon applies its own timeout; the built request's is not sent.
  const built = requests.build(basePath, op, call.input, 0);
  return {
    op,
    request: {
      operationId: op.id,
      method: op.method,
      path: built.path,
      headers: built.headers,
      ...(built.body === undefined ? {} : { body: built.body }),
    } satisfies BenchRequest,
  };
}

/**
 * The cycle: each operation of the mix `weight` times, a consumer preceded by the request that
 * creates its resource, repeated once per prepared pet so that reads and writes spread over the
 * catalogue rather than hammer one row. Requests are static (built once, sent as bytes), except
 * consumers.
 */
export function buildCycle(
  mix: readonly MixEntry[],
  catalogue: BenchCatalogue,
  operations: ReadonlyMap<string, Operation>,
  basePath = '',
  /** Sent where each operation's scheme (or `--auth-header`) puts it; none: a cycle looked at, not sent. */
  key?: string,
): BenchRequest[] {
  const requests = new KeyRequests(key);
  const rounds = Math.max(1, catalogue.petIds.length);
  const cycle: BenchRequest[] = [];
  for (let r = 0; r < rounds; r++) {
    const ids: StepIds = {
      petId: catalogue.petIds[r % rounds] ?? 1,
      categoryId: catalogue.categoryIds[r % Math.max(1, catalogue.categoryIds.length)] ?? 1,
      orderId: catalogue.orderId,
    };
    for (const { operationId, weight } of mix) {
      const step = STEPS[operationId];
      if (!step) throw new Error(`bench: no request is defined for operation '${operationId}'`);
      for (let w = 0; w < weight; w++) {
        const call = captureCall((api) => step.call(api, ids));
        const { op, request } = toRequest(call, operations, basePath, requests);
        if (step.consumes === undefined) {
          cycle.push(request);
          continue;
        }
        const creates = CREATES[step.consumes];
        const creator = STEPS[creates.operationId] as (typeof STEPS)[string];
        cycle.push({
          ...toRequest(
            captureCall((api) => creator.call(api, ids)),
            operations,
            basePath,
            requests,
          ).request,
          provides: step.consumes,
        });
        const values = { ...call.input.path, [creates.param]: MARK };
        const marked = requests.build(basePath, op, { ...call.input, path: values }, 0).path;
        const [before = '', after = ''] = marked.split(MARK);
        cycle.push({ ...request, consumes: { resource: step.consumes, before, after } });
      }
    }
  }
  return cycle;
}
