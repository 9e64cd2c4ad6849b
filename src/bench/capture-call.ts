import type { CallInput } from '../client/client.ts';
import { type Api, PetstoreApi } from '../client/petstore-api.ts';

/** A call as the typed API makes it: which operation, with which path values, query and body. */
export interface CapturedCall {
  operationId: string;
  input: CallInput;
}

const NEVER = new Promise<never>(() => {});

/**
 * The call `make` makes through the typed API, captured instead of sent. The benchmark's requests are
 * built by the same methods the scenarios call (`api.placeOrder({ petId, quantity: 1 })`), so that
 * an operation's path parameters, query and body have one definition, typed against the models.
 */
export function captureCall(make: (api: Api) => unknown): CapturedCall {
  let captured: CapturedCall | undefined;
  const api = new PetstoreApi((operationId, input) => {
    captured = { operationId, input: input ?? {} };
    return NEVER;
  });
  void make(api);
  if (!captured) throw new Error('captureCall: no call was made');
  return captured;
}
