import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { FleetStore } from './fleet-store.ts';

/** A fleet as the run's configuration resolved it (`--fleet`, `--generators`, `--shard` or the Job's index). */
export interface FleetConfig {
  name: string;
  generators: number;
  /** 1-based; undefined: the lowest free index is claimed in the store. */
  index: number | undefined;
  /** Where the index came from, as print-config says it. */
  indexFrom: '--shard' | 'JOB_COMPLETION_INDEX' | 'the store';
  waitMs: number;
  ttlSeconds: number;
}

/**
 * The scenario file's content and what else the generators must agree on (its workload, the
 * thresholds judged), hashed: generators of one fleet run the same script and judge it alike.
 */
export async function scenarioDigest(path: string | undefined, agreed: string): Promise<string> {
  const hash = createHash('sha256');
  if (path) hash.update(await readFile(path).catch(() => Buffer.from('')));
  return hash.update(agreed).digest('hex').slice(0, 16);
}

/**
 * Joins the fleet: claims an index (refused, exit 2, when it is taken, or N or the scenario disagree
 * with the generators already joined), then waits until all N have (exit 3 past --fleet-wait).
 * Nothing is sent before it returns.
 */
export async function joinFleet(
  fleet: FleetConfig,
  store: { url: string; label: string },
  digest: string,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<{ store: FleetStore; index: number }> {
  const identity = {
    name: fleet.name,
    generators: fleet.generators,
    digest,
    host: `${hostname()}:${process.pid}`,
  };
  let connected: FleetStore;
  try {
    connected = await FleetStore.connect(store.url, identity, fleet.ttlSeconds);
  } catch (error) {
    throw new InputError(
      `--quota-store ${store.label}: cannot connect (${(error as Error).message})`,
      EXIT.UNREACHABLE,
    );
  }
  try {
    const outcome = await connected.join(fleet.index ?? 0);
    if (!outcome.joined) throw new InputError(refusal(fleet, outcome), EXIT.USAGE);
    log(`generator ${outcome.index} of ${fleet.generators} joined fleet ${fleet.name}`);
    await allJoined(connected, fleet, signal);
    return { store: connected, index: outcome.index };
  } catch (error) {
    await connected.close();
    throw error;
  }
}

function refusal(fleet: FleetConfig, o: { why: string; told: string }): string {
  const name = `fleet ${fleet.name}`;
  if (o.why === 'generators')
    return `${name} was joined as ${o.told} generators; this one says --generators ${fleet.generators}`;
  if (o.why === 'digest')
    return `${name} runs another scenario (its content, workload or thresholds differ from this generator's)`;
  if (o.why === 'taken') return `${name}: generator ${fleet.index} has joined already (${o.told})`;
  return `${name}: all ${fleet.generators} generators have joined already`;
}

async function allJoined(store: FleetStore, fleet: FleetConfig, signal?: AbortSignal): Promise<void> {
  const deadline = now() + fleet.waitMs;
  for (;;) {
    if (signal?.aborted)
      throw new InputError(
        `fleet ${fleet.name}: interrupted while waiting for the generators to join; nothing was sent`,
        EXIT.INTERRUPTED,
      );
    const joined = await store.joined();
    if (joined >= fleet.generators) return;
    if (now() >= deadline)
      throw new InputError(
        `fleet ${fleet.name}: ${joined} of ${fleet.generators} generators joined within ${fleet.waitMs / 1000} s (--fleet-wait); nothing was sent`,
        EXIT.UNREACHABLE,
      );
    await sleepUntil(Math.min(deadline, now() + 200), signal);
  }
}
