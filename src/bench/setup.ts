import type { Operation } from '../api/operations.ts';
import type { RateWindow } from '../api/plans.ts';
import { bounded, PhaseTimeout } from '../client/bounded.ts';
import { ApiClient } from '../client/client.ts';
import { AbortedError } from '../client/gate.ts';
import { type Api, type CallFn, petstoreApi } from '../client/petstore-api.ts';
import { failedCall, NoAnswerError, prepareCatalogue, removeCatalogue } from '../scenario/catalogue.ts';
import type { NetworkOptions } from '../transport/network.ts';
import type { MixEntry } from './operation-mix.ts';
import type { BenchCatalogue } from './request-cycle.ts';

/** Pets setup prepares (with deep stock, so that orders never run one out): the cycle spreads over them. */
export const BENCH_PETS = 5;
/** Setup and teardown are a few paced requests; past this they are stuck (a spent quota, a dead target). */
const SETUP_TIMEOUT_MS = 20_000;
const TEARDOWN_TIMEOUT_MS = 10_000;

export interface SetupInput {
  baseUrl: string;
  apiKey: string | undefined;
  plan: string;
  windows: RateWindow[];
  operations: Operation[];
  mix: readonly MixEntry[];
  timeoutMs: number;
  network?: NetworkOptions | undefined;
}

export interface Prepared {
  catalogue: BenchCatalogue;
  /** Removes what setup created; best effort, bounded in time. Resolves to what it could not remove, if anything. */
  teardown(): Promise<string | undefined>;
  /** Leaves what setup created (a target about to be stopped) and frees the client. */
  close(): Promise<void>;
}

/** Bench's own preparation is not interruptible by a signal: its limits bound it. */
const uninterrupted = new AbortController().signal;

/**
 * Prepares what the requests use, as the scenarios do (src/scenario/catalogue.ts: a category and pets
 * with deep stock, reusing what the target has), through the plan-aware client: its requests keep to
 * the plan and wait out any 429, and are not part of the benchmark's figures. With getOrder in the mix,
 * one order too.
 */
export async function prepareBench(input: SetupInput): Promise<Prepared> {
  const client = new ApiClient({
    baseUrl: input.baseUrl,
    apiKey: input.apiKey,
    keyLabel: input.plan,
    operations: input.operations,
    windows: input.windows,
    timeoutMs: input.timeoutMs,
    network: input.network,
    sink: { record: () => {} },
  });
  const api: Api = petstoreApi(client.call.bind(client) as CallFn);
  let catalogue: BenchCatalogue;
  try {
    catalogue = await bounded(client, SETUP_TIMEOUT_MS, uninterrupted, async () => {
      const prepared: BenchCatalogue = await prepareCatalogue(api, BENCH_PETS);
      if (input.mix.some((e) => e.operationId === 'getOrder')) {
        const order = await api.placeOrder({ petId: prepared.petIds[0] as number, quantity: 1 });
        if (!order.ok) throw failedCall('placeOrder', order);
        prepared.orderId = order.body.id;
      }
      return prepared;
    });
  } catch (error) {
    await client.close().catch(() => {});
    const why =
      error instanceof PhaseTimeout || error instanceof AbortedError
        ? `not done in ${SETUP_TIMEOUT_MS / 1000} s (a spent quota, or a target that does not answer)`
        : `${(error as Error).message}${/answered 40[13]\b/.test((error as Error).message) ? ' (was the key refused?)' : ''}`;
    throw error instanceof NoAnswerError ? new NoAnswerError(`setup: ${why}`) : new Error(`setup: ${why}`);
  }
  return {
    catalogue,
    teardown: async () => {
      try {
        await bounded(client, TEARDOWN_TIMEOUT_MS, uninterrupted, async () => {
          if (catalogue.orderId !== undefined) await api.deleteOrder(catalogue.orderId);
          await removeCatalogue(api, catalogue);
        });
        return undefined;
      } catch {
        return `pets ${catalogue.petIds.join(', ')} that setup created were not all removed`;
      } finally {
        await client.close().catch(() => {});
      }
    },
    close: () => client.close().catch(() => {}),
  };
}
