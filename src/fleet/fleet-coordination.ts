import { now, sleepUntil } from '../client/clock.ts';
import { type Coordination, SetupError } from '../scenario/setup-teardown.ts';
import type { FleetStore } from './fleet-store.ts';

/**
 * Setup once, one start, teardown once, across a fleet's generators: the Coordination worker
 * threads use in one process, through the quota store. Generator 1 runs setup and stores its data;
 * the others take it from there. Every generator then sleeps until one instant of the store's clock,
 * a lead ahead of the first to ask, so the shards' workloads overlap exactly. Once every shard's
 * workload has ended (or its generator is lost), the first to see it tears down.
 */
export function fleetCoordination<D>(o: {
  store: FleetStore;
  index: number;
  generators: number;
  /** How far ahead of the first generator's asking the fleet starts (1 to 2 s). */
  leadMs: number;
  /** The longest a generator waits for generator 1's setup. */
  setupWaitMs: number;
  signal: AbortSignal;
  /** A generator stopped by its user (Ctrl-C) leaves teardown to the others, and does not wait. */
  stoppedByUser: () => boolean;
  log: (line: string) => void;
}): Coordination<D> {
  return {
    async setup(run) {
      const data = o.index === 1 ? await runAndShare(o.store, run) : await sharedSetup<D>(o);
      const at = await o.store.startAt(o.leadMs);
      o.log(`the fleet starts in ${Math.max(0, Math.round(at - now()))} ms, on the store's clock`);
      await sleepUntil(at, o.signal);
      return data;
    },
    async beforeTeardown() {
      await o.store.markFinished(o.index);
      if (o.stoppedByUser()) return false;
      // Teardown removes what every shard's workload uses: only once all have ended, or are lost.
      const deadline = now() + o.setupWaitMs;
      for (;;) {
        const shards = await o.store.shards(false);
        if (shards.every((s) => s.finished || !s.alive)) return o.store.claim('teardown');
        if (now() > deadline) {
          o.log(`not every generator ended within ${o.setupWaitMs / 1000} s: this one does not tear down`);
          return false;
        }
        await sleepUntil(now() + 100);
      }
    },
  };
}

async function runAndShare<D>(store: FleetStore, run: () => Promise<D>): Promise<D> {
  try {
    const data = await run();
    await store.putSetup({ data: data ?? null });
    return data;
  } catch (error) {
    await store.putSetup({ failed: (error as Error).message }).catch(() => undefined);
    throw error;
  }
}

/** Generator 1's setup data, polled for until it comes or fails. */
async function sharedSetup<D>(o: {
  store: FleetStore;
  setupWaitMs: number;
  signal: AbortSignal;
}): Promise<D> {
  const deadline = now() + o.setupWaitMs;
  while (!o.signal.aborted) {
    const outcome = await o.store.setup();
    if (outcome && 'failed' in outcome)
      throw new SetupError(`generator 1 of the fleet could not set up: ${outcome.failed}`);
    if (outcome) return outcome.data as D;
    if (now() > deadline)
      throw new SetupError(`generator 1 of the fleet did not finish setup within ${o.setupWaitMs / 1000} s`);
    await sleepUntil(now() + 100, o.signal);
  }
  throw new SetupError('interrupted while waiting for the fleet setup');
}
