import { join, resolve } from 'node:path';
import type { RunConfig } from '../config/run.ts';
import { fleetCoordination } from '../fleet/fleet-coordination.ts';
import { FleetMember } from '../fleet/fleet-member.ts';
import { joinFleet, scenarioDigest } from '../fleet/join.ts';
import type { ThresholdResult } from '../result/types.ts';
import type { Coordination } from '../scenario/setup-teardown.ts';

/** A generator 1 to 2 s ahead of the fleet's start hears of it in time, on any loaded machine. */
const START_LEAD_MS = 1500;
/** The others wait for generator 1's setup as long as setup may take (k6's 60 s), and a margin. */
const SETUP_WAIT_MS = 70_000;

/** A generator's part in its fleet, from joining to the fleet's result. */
export interface FleetRun {
  member: FleetMember;
  coordination: Coordination<unknown>;
  /** Where the fleet's result goes (`--out`, else reports/<scenario>-fleet-<name>/); shards beneath. */
  baseOut: string;
  /** This generator's own result: <base>/shard-<I>/. */
  shardOut: string;
  /** The threshold this generator saw fail for good on the fleet's totals (it told the others). */
  breach?: ThresholdResult;
}

/**
 * `--fleet`: joins before anything is sent, and returns the configuration of the shard this
 * generator claimed (resolved again with it, when the index was the store's to give), its heartbeat
 * started, and the coordination that runs setup once, starts every generator at one instant and
 * tears down once.
 */
export async function joinRunFleet(
  config: RunConfig,
  resolveShard: (shard: string) => Promise<RunConfig>,
  o: { signal: AbortSignal; stoppedByUser: () => boolean; defer: (close: () => Promise<void>) => void },
): Promise<{ config: RunConfig; fleet: FleetRun }> {
  const fleet = config.fleet;
  const store = config.quotaStore;
  if (!fleet || !store) throw new Error('joinRunFleet needs a fleet and a store');
  const log = (line: string) => {
    if (!config.quiet) process.stderr.write(`petstore-load: ${line}\n`);
  };
  // Generators of one fleet run one scenario, one workload, and judge it by the same thresholds.
  const agreed = JSON.stringify({
    workload: config.scenario.workload ?? null,
    thresholds: config.thresholds.map((t) => t.expression),
  });
  const digest = await scenarioDigest(config.scenarioPath, agreed);
  const joined = await joinFleet(fleet, store, digest, log, o.signal);
  const member = new FleetMember(joined.store, joined.index, fleet.generators, log);
  member.startBeating();
  o.defer(async () => {
    member.stopBeating();
    await joined.store.close();
  });
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
    stoppedByUser: o.stoppedByUser,
    log,
  });
  const baseOut = resolve(
    config.outputs.out ?? join('reports', `${config.scenario.name}-fleet-${fleet.name}`),
  );
  return {
    config: resolved,
    fleet: { member, coordination, baseOut, shardOut: join(baseOut, `shard-${joined.index}`) },
  };
}
