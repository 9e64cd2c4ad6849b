import type { Redis } from 'ioredis';
import { connectRedis } from '../api/redis.ts';

/**
 * A fleet's shared state in the quota store (Redis): who joined, under what N and scenario, when the
 * fleet starts, setup's data, and who finished. No coordinator of our own: every generator runs the
 * same steps, and Redis' atomic scripts decide between them. Keys live `ttlSeconds` (`--fleet-ttl`).
 */

/** What every generator of one fleet must agree on, and who this one is. */
export interface FleetIdentity {
  name: string;
  generators: number;
  /** The scenario's content, hashed: generators running different scripts are not one fleet. */
  digest: string;
  /** Host and process, as the fleet's result names each shard. */
  host: string;
}

export type JoinOutcome =
  | { joined: true; index: number }
  | { joined: false; why: 'generators' | 'digest' | 'taken' | 'full'; told: string };

// Claims index ARGV[4] (0: the lowest free one) once N and the digest agree with what is stored.
const JOIN = `
local n = redis.call('HGET', KEYS[1], 'n')
if n then
  if n ~= ARGV[1] then return {'generators', n} end
  local d = redis.call('HGET', KEYS[1], 'digest')
  if d ~= ARGV[2] then return {'digest', d} end
else
  redis.call('HSET', KEYS[1], 'n', ARGV[1], 'digest', ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
end
local wanted = tonumber(ARGV[4])
if wanted > 0 then
  if redis.call('HSETNX', KEYS[2], ARGV[4], ARGV[3]) == 0 then return {'taken', redis.call('HGET', KEYS[2], ARGV[4])} end
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return {'ok', ARGV[4]}
end
for i = 1, tonumber(ARGV[1]) do
  if redis.call('HSETNX', KEYS[2], tostring(i), ARGV[3]) == 1 then
    redis.call('EXPIRE', KEYS[2], ARGV[5])
    return {'ok', tostring(i)}
  end
end
return {'full', ARGV[1]}
`;

// The fleet's start on the store's clock: the first generator to ask sets it ARGV[1] ms ahead.
const START = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], tostring(now + tonumber(ARGV[1])), 'NX', 'EX', ARGV[2])
return {redis.call('GET', KEYS[1]), tostring(now)}
`;

export class FleetStore {
  private readonly redis: Redis;
  private readonly id: FleetIdentity;
  private readonly ttlSeconds: number;

  private constructor(redis: Redis, id: FleetIdentity, ttlSeconds: number) {
    this.redis = redis;
    this.id = id;
    this.ttlSeconds = ttlSeconds;
  }

  static async connect(url: string, id: FleetIdentity, ttlSeconds: number): Promise<FleetStore> {
    return new FleetStore(await connectRedis(url, { persistent: true }), id, ttlSeconds);
  }

  private key(part: string): string {
    return `petstore-load:fleet:${this.id.name}:${part}`;
  }

  /** Claims `wanted` (1-based), or the lowest free index when 0. */
  async join(wanted: number): Promise<JoinOutcome> {
    const [what, told] = (await this.redis.eval(
      JOIN,
      2,
      this.key('meta'),
      this.key('shards'),
      String(this.id.generators),
      this.id.digest,
      this.id.host,
      String(wanted),
      String(this.ttlSeconds),
    )) as [string, string];
    if (what === 'ok') return { joined: true, index: Number(told) };
    return { joined: false, why: what as 'generators' | 'digest' | 'taken' | 'full', told };
  }

  /** How many generators have joined. */
  joined(): Promise<number> {
    return this.redis.hlen(this.key('shards'));
  }

  /** The fleet's start instant on this machine's clock: the store's, moved by the offset read with it. */
  async startAt(leadMs: number): Promise<number> {
    const sent = Date.now();
    const [start, storeNow] = (await this.redis.eval(
      START,
      1,
      this.key('start'),
      String(leadMs),
      String(this.ttlSeconds),
    )) as [string, string];
    const offset = (sent + Date.now()) / 2 - Number(storeNow);
    return Number(start) + offset;
  }

  /** Setup's data (JSON), or why it failed, for the generators that did not run it. */
  async putSetup(outcome: { data: unknown } | { failed: string }): Promise<void> {
    await this.redis.set(this.key('setup'), JSON.stringify(outcome), 'EX', this.ttlSeconds);
  }

  async setup(): Promise<{ data: unknown } | { failed: string } | undefined> {
    const text = await this.redis.get(this.key('setup'));
    return text === null ? undefined : (JSON.parse(text) as { data: unknown } | { failed: string });
  }

  /** Counts this generator's workload done; the count after it (N: this one is the last). */
  async finished(): Promise<number> {
    const done = await this.redis.incr(this.key('finished'));
    await this.redis.expire(this.key('finished'), this.ttlSeconds);
    return done;
  }

  close(): Promise<void> {
    return this.redis.quit().then(
      () => undefined,
      () => undefined,
    );
  }
}
