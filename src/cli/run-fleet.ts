import type { RunConfig } from '../config/run.ts';
import { fleetCoordination } from '../fleet/fleet-coordination.ts';
import { joinFleet, scenarioDigest } from '../fleet/join.ts';
import type { Coordination } from '../scenario/setup-teardown.ts';

/** A generator 1 to 2 s ahead of the fleet's start hears of it in time, on any loaded machine. */
const START_LEAD_MS = 1500;
/** The others wait for generator 1's setup as long as setup may take (k6's 60 s), and a margin. */
const SETUP_WAIT_MS = 70_000;

/**
 * `--fleet`: joins before anything is sent, and returns the configuration of the shard this
 * generator claimed (resolved again with it, when the index was the store's to give) and the
 * coordination that runs setup once, starts every generator at one instant and tears down once.
 */
export async function joinRunFleet(
  config: RunConfig,
  resolveShard: (shard: string) => Promise<RunConfig>,
  o: { signal: AbortSignal; defer: (close: () => Promise<void>) => void },
): Promise<{ config: RunConfig; coordination: Coordination<unknown> }> {
  const fleet = config.fleet;
  const store = config.quotaStore;
  if (!fleet || !store) throw new Error('joinRunFleet needs a fleet and a store');
  const log = (line: string) => {
    if (!config.quiet) process.stderr.write(`petstore-load: ${line}\n`);
  };
  const digest = await scenarioDigest(config.scenarioPath, JSON.stringify(config.scenario.workload ?? null));
  const joined = await joinFleet(fleet, store, digest, log, o.signal);
  o.defer(() => joined.store.close());
  const resolved =
    fleet.index === undefined
      ? {
          ...(await resolveShard(`${joined.index}/${fleet.generators}`)),
          fleet: { ...fleet, index: joined.index },
        }
      : config;
  const coordination = fleetCoordination({
    store: joined.store,
    index: joined.index,
    generators: fleet.generators,
    leadMs: START_LEAD_MS,
    setupWaitMs: SETUP_WAIT_MS,
    signal: o.signal,
    log,
  });
  return { config: resolved, coordination };
}
