import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { type Coordination, SetupError } from '../scenario/setup-teardown.ts';
import type { FleetStore } from './fleet-store.ts';
import { LossWatch } from './loss-watch.ts';

/** How long a step of the fleet's asks a store that does not answer again (a failover's length). */
export const STORE_RETRY_MS = 10_000;

/**
 * A store call asked again until it answers or STORE_RETRY_MS pass; then one line of words, exit 3.
 * The store's own message never reaches the user: "what" says what could not be done.
 */
export async function withStore<T>(
  what: string,
  call: () => Promise<T>,
  stopped?: () => boolean,
): Promise<T> {
  const deadline = now() + STORE_RETRY_MS;
  for (;;) {
    try {
      return await call();
    } catch {
      if (now() > deadline || stopped?.())
        throw new InputError(
          `the fleet's store did not answer for ${STORE_RETRY_MS / 1000} s: could not ${what}`,
          EXIT.UNREACHABLE,
        );
      await sleepUntil(now() + 250);
    }
  }
}

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
  /** The longest a generator waits for generator 1's setup, or for the others' workloads to end. */
  setupWaitMs: number;
  signal: AbortSignal;
  /** A generator stopped by its user (Ctrl-C) leaves teardown to the others, and does not wait. */
  stoppedByUser: () => boolean;
  log: (line: string) => void;
}): Coordination<D> {
  return {
    async setup(run) {
      const data = o.index === 1 ? await runAndShare(o.store, run) : await sharedSetup<D>(o);
      const at = await withStore("agree on the fleet's start", () => o.store.startAt(o.leadMs));
      o.log(`the fleet starts in ${Math.max(0, Math.round(at - now()))} ms, on the store's clock`);
      await sleepUntil(at, o.signal);
      return data;
    },
    async beforeTeardown() {
      await withStore('say this generator ended', () => o.store.markFinished(o.index), o.stoppedByUser);
      return (await allEnded(o)) && o.store.claim('teardown').catch(() => false);
    },
  };
}

/** Teardown removes what every shard's workload uses: only once all have ended, or are lost. */
async function allEnded(o: {
  store: FleetStore;
  setupWaitMs: number;
  stoppedByUser: () => boolean;
  log: (line: string) => void;
}): Promise<boolean> {
  const deadline = now() + o.setupWaitMs;
  const watch = new LossWatch();
  while (!o.stoppedByUser()) {
    try {
      const shards = await o.store.shards(false);
      watch.seen(shards);
      if (shards.every((s) => s.finished || s.stored || watch.lost(s))) return true;
    } catch {
      watch.storeAway();
    }
    if (now() > deadline) {
      o.log(`not every generator ended within ${o.setupWaitMs / 1000} s: this one does not tear down`);
      return false;
    }
    await sleepUntil(now() + 100);
  }
  return false;
}

async function runAndShare<D>(store: FleetStore, run: () => Promise<D>): Promise<D> {
  let data: D;
  try {
    data = await run();
  } catch (error) {
    await store.putSetup({ failed: (error as Error).message }).catch(() => undefined);
    throw error;
  }
  await withStore("hand setup's data to the others", () => store.putSetup({ data: data ?? null }));
  return data;
}

/** Generator 1's setup data, polled for until it comes or fails. */
async function sharedSetup<D>(o: {
  store: FleetStore;
  setupWaitMs: number;
  signal: AbortSignal;
}): Promise<D> {
  const deadline = now() + o.setupWaitMs;
  while (!o.signal.aborted) {
    const outcome = await withStore("read setup's data", () => o.store.setup());
    if (outcome && 'failed' in outcome)
      throw new SetupError(`generator 1 of the fleet could not set up: ${outcome.failed}`);
    if (outcome) return outcome.data as D;
    if (now() > deadline)
      throw new SetupError(`generator 1 of the fleet did not finish setup within ${o.setupWaitMs / 1000} s`);
    await sleepUntil(now() + 100, o.signal);
  }
  throw new SetupError('interrupted while waiting for the fleet setup');
}
