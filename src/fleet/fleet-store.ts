import { gunzipSync, gzipSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { connectRedis } from '../api/redis.ts';
import { now } from '../client/clock.ts';

/**
 * A fleet's shared state in the quota store (Redis): who joined, under what N and scenario, when the
 * fleet starts, setup's data, who is alive (a heartbeat key that expires), each generator's latest
 * snapshot and final result (gzipped JSON), who finished, a stop asked by a threshold, and the
 * fleet's merged result. No coordinator of our own: every generator runs the same steps, and Redis'
 * atomic commands decide between them. Keys live `ttlSeconds` (`--fleet-ttl`).
 */

/** A generator silent this long (no heartbeat) is lost: killed, partitioned, its machine gone. */
export const LOST_AFTER_MS = 5000;

/** What the store holds of one shard when the fleet's result is gathered. */
export interface ShardHeld {
  index: number;
  /** host:pid of the generator that claimed it. */
  host: string | undefined;
  alive: boolean;
  finished: boolean;
  /** It stored its final result. */
  stored: boolean;
  /** Its final result (JSON text), once it stored one. */
  result: string | undefined;
  /** Its latest snapshot (JSON text): a checkpoint, what a lost generator leaves behind. */
  snapshot: string | undefined;
}

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
  -- A new fleet under a name used before (its meta expired first): nothing of the old one stays.
  local stale = {KEYS[2]}
  for _, part in ipairs({'setup', 'start', 'done', 'stop', 'claim:teardown', 'claim:result', 'fleet-result'}) do
    table.insert(stale, ARGV[6] .. part)
  end
  for i = 1, tonumber(ARGV[1]) do
    for _, part in ipairs({'result:', 'snapshot:', 'beat:'}) do table.insert(stale, ARGV[6] .. part .. i) end
  end
  redis.call('DEL', unpack(stale))
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
return redis.call('GET', KEYS[1])
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

  /** A fleet as found in the store afterwards (`merge --fleet`): its N read from what it was joined as. */
  static async open(url: string, name: string): Promise<FleetStore | undefined> {
    const redis = await connectRedis(url);
    const generators = Number(
      (await redis.hget(`petstore-load:fleet:${name}:meta`, 'n').catch(() => null)) ?? 0,
    );
    if (generators > 0) return new FleetStore(redis, { name, generators, digest: '', host: 'merge' }, 0);
    await redis.quit().catch(() => undefined);
    return undefined;
  }

  get name(): string {
    return this.id.name;
  }

  private key(part: string): string {
    return `petstore-load:fleet:${this.id.name}:${part}`;
  }

  /** Claims `wanted` (1-based), or the lowest free index when 0 (the first to join clears an old fleet's keys). */
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
      this.key(''),
    )) as [string, string];
    if (what === 'ok') return { joined: true, index: Number(told) };
    return { joined: false, why: what as 'generators' | 'digest' | 'taken' | 'full', told };
  }

  /** How many generators have joined. */
  joined(): Promise<number> {
    return this.redis.hlen(this.key('shards'));
  }

  /** The fleet's start instant on this machine's clock: the store's, moved by the offset between them. */
  async startAt(leadMs: number): Promise<number> {
    const start = (await this.redis.eval(
      START,
      1,
      this.key('start'),
      String(leadMs),
      String(this.ttlSeconds),
    )) as string;
    return Number(start) + (await this.clockOffset());
  }

  /**
   * This machine's clock less the store's, from the quickest of a few round trips (NTP's rule: the
   * shortest trip bounds the error best): one trip whose answer a loaded machine read late would
   * move this generator's start by half the delay.
   */
  private async clockOffset(trips = 5): Promise<number> {
    let best = { trip: Number.POSITIVE_INFINITY, offset: 0 };
    for (let i = 0; i < trips; i++) {
      const sent = now();
      const [seconds, micros] = await this.redis.time();
      const back = now();
      if (back - sent < best.trip)
        best = {
          trip: back - sent,
          offset: (sent + back) / 2 - (Number(seconds) * 1000 + Number(micros) / 1000),
        };
    }
    return best.offset;
  }

  /** Setup's data (JSON), or why it failed, for the generators that did not run it. */
  async putSetup(outcome: { data: unknown } | { failed: string }): Promise<void> {
    await this.redis.set(this.key('setup'), JSON.stringify(outcome), 'EX', this.ttlSeconds);
  }

  async setup(): Promise<{ data: unknown } | { failed: string } | undefined> {
    const text = await this.redis.get(this.key('setup'));
    return text === null ? undefined : (JSON.parse(text) as { data: unknown } | { failed: string });
  }

  /** Alive for LOST_AFTER_MS more: the store's clock times the silence, not any generator's. */
  async beat(index: number, lostAfterMs = LOST_AFTER_MS): Promise<void> {
    await this.redis.set(this.key(`beat:${index}`), this.id.host, 'PX', lostAfterMs);
  }

  async putSnapshot(index: number, json: string): Promise<void> {
    await this.redis.set(this.key(`snapshot:${index}`), gzipSync(json), 'EX', this.ttlSeconds);
  }

  async putResult(index: number, json: string): Promise<void> {
    await this.redis.set(this.key(`result:${index}`), gzipSync(json), 'EX', this.ttlSeconds);
  }

  /** Marks this generator's workload done (teardown waits for every shard to be done or lost). */
  async markFinished(index: number): Promise<void> {
    await this.redis.sadd(this.key('done'), String(index));
    await this.redis.expire(this.key('done'), this.ttlSeconds);
  }

  /** Every shard as the store holds it now; `withData` false reads no snapshot or result. */
  async shards(withData: boolean): Promise<ShardHeld[]> {
    const n = this.id.generators;
    const batch = this.redis.pipeline().hgetall(this.key('shards')).smembers(this.key('done'));
    for (let i = 1; i <= n; i++) {
      batch.exists(this.key(`beat:${i}`)).exists(this.key(`result:${i}`));
      if (withData) batch.getBuffer(this.key(`result:${i}`)).getBuffer(this.key(`snapshot:${i}`));
    }
    const answers = ((await batch.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const hosts = answers[0] as Record<string, string>;
    const done = new Set(answers[1] as string[]);
    const per = withData ? 4 : 2;
    const unzip = (b: unknown) => (b ? gunzipSync(b as Buffer).toString() : undefined);
    return Array.from({ length: n }, (_, k) => {
      const at = 2 + k * per;
      return {
        index: k + 1,
        host: hosts[String(k + 1)],
        alive: answers[at] === 1,
        finished: done.has(String(k + 1)),
        stored: answers[at + 1] === 1,
        result: withData ? unzip(answers[at + 2]) : undefined,
        snapshot: withData ? unzip(answers[at + 3]) : undefined,
      };
    });
  }

  /** True for the one generator that claims `what` first (the teardown, the fleet result's writing). */
  async claim(what: string): Promise<boolean> {
    return (
      (await this.redis.set(this.key(`claim:${what}`), this.id.host, 'EX', this.ttlSeconds, 'NX')) === 'OK'
    );
  }

  /** A threshold that failed for good on the fleet's totals: the first word stands. */
  async askStop(reason: string): Promise<void> {
    await this.redis.set(this.key('stop'), reason, 'EX', this.ttlSeconds, 'NX');
  }

  stopAsked(): Promise<string | null> {
    return this.redis.get(this.key('stop'));
  }

  async putFleetResult(json: string): Promise<void> {
    await this.redis.set(this.key('fleet-result'), gzipSync(json), 'EX', this.ttlSeconds);
  }

  async fleetResult(): Promise<string | undefined> {
    const b = await this.redis.getBuffer(this.key('fleet-result'));
    return b ? gunzipSync(b).toString() : undefined;
  }

  /** Ends the connection, at once when the store is away (a quit would wait on a reconnect forever). */
  async close(): Promise<void> {
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
