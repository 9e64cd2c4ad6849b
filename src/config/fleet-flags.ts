import type { Options } from 'yargs';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type { StoreAddress } from '../api/redis.ts';
import type { FleetConfig } from '../fleet/join.ts';
import type { Share } from '../scenario/share.ts';

const DEFAULT_FLEET_WAIT = '60s';
const DEFAULT_FLEET_TTL = '24h';

/** `run`'s fleet flags: several generators, one run, through the quota store. */
export const FLEET_FLAGS = {
  fleet: {
    requiresArg: true,
    type: 'string',
    describe:
      "Join the fleet of this name (needs --quota-store and --generators): each generator claims a shard in the store (or takes --shard I/N, or JOB_COMPLETION_INDEX in a Kubernetes Indexed Job), setup runs once, and all start at one instant of the store's clock",
  },
  generators: {
    requiresArg: true,
    type: 'number',
    describe: '--fleet: how many generators the fleet has; every one must say the same',
  },
  'fleet-wait': {
    requiresArg: true,
    type: 'string',
    describe: `--fleet: how long to wait for every generator to join before giving up, nothing sent (exit 3; default ${DEFAULT_FLEET_WAIT})`,
  },
  'fleet-ttl': {
    requiresArg: true,
    type: 'string',
    describe: `--fleet: how long the fleet's keys stay in the store (default ${DEFAULT_FLEET_TTL})`,
  },
} as const satisfies Record<string, Options>;

/**
 * The fleet, checked before anything connects: its store, its N, and this generator's index when it
 * is known already (`--shard I/N`, or Kubernetes' JOB_COMPLETION_INDEX, 0-based: index + 1).
 */
export function resolveFleet(
  args: {
    fleet?: string | undefined;
    generators?: number | undefined;
    fleetWait?: string | undefined;
    fleetTtl?: string | undefined;
    workers: number;
  },
  env: NodeJS.ProcessEnv,
  quotaStore: StoreAddress | undefined,
  shard: Share | undefined,
  embedded: boolean,
): FleetConfig | undefined {
  if (args.fleet === undefined) {
    for (const [flag, value] of [
      ['--generators', args.generators],
      ['--fleet-wait', args.fleetWait],
      ['--fleet-ttl', args.fleetTtl],
    ] as const)
      if (value !== undefined) throw new InputError(`${flag} needs --fleet`);
    return undefined;
  }
  const name = args.fleet;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name))
    throw new InputError(`--fleet: '${name}' is not a name (letters, digits, . _ -, at most 100)`);
  if (!quotaStore) throw new InputError('--fleet needs --quota-store: the fleet meets in the store');
  if (embedded) throw new InputError('--fleet needs --base-url: the generators of a fleet load one target');
  const n = args.generators;
  if (n === undefined || !Number.isInteger(n) || n < 1)
    throw new InputError('--fleet needs --generators N, a whole number >= 1');
  if (args.workers > 1)
    throw new InputError('--fleet runs one worker per generator: it cannot be used with --workers yet');
  const waitMs = parseDuration(args.fleetWait ?? DEFAULT_FLEET_WAIT, '--fleet-wait');
  const ttlSeconds = Math.ceil(parseDuration(args.fleetTtl ?? DEFAULT_FLEET_TTL, '--fleet-ttl') / 1000);
  const base = { name, generators: n, waitMs, ttlSeconds };
  if (shard) {
    if (shard.count !== n)
      throw new InputError(`--shard ${shard.index}/${shard.count} disagrees with --generators ${n}`);
    return { ...base, index: shard.index, indexFrom: '--shard' };
  }
  const job = env.JOB_COMPLETION_INDEX;
  if (job !== undefined && job !== '') {
    const i = Number(job);
    if (!Number.isInteger(i) || i < 0 || i >= n)
      throw new InputError(
        `JOB_COMPLETION_INDEX=${job} is not an index of --generators ${n} (0 to ${n - 1})`,
      );
    return { ...base, index: i + 1, indexFrom: 'JOB_COMPLETION_INDEX' };
  }
  return { ...base, index: undefined, indexFrom: 'the store' };
}
