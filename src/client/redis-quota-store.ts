import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis, serverRunId } from '../api/redis.ts';
import { now } from './clock.ts';
import type { QuotaSpec, QuotaStore } from './quota-store.ts';
import { StoreWatch } from './store-outage.ts';

/**
 * The reservation rule of `reserveSlot` (quota-store.ts), run atomically inside Redis on Redis's own
 * clock, so that generators on several machines share one spacing grid, one sliding log per window
 * and one pause. Times are stored with three decimals: Lua's tostring would keep 14 digits.
 */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local p = KEYS[1]
local spacing = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local nextv = tonumber(redis.call('GET', p .. ':next') or '-1e300')
local paused = tonumber(redis.call('GET', p .. ':pause') or '0')
local at = math.max(now, nextv, paused)
local longest = 0
for i = 1, n do
  local limit = tonumber(ARGV[1 + 2 * i])
  local span = tonumber(ARGV[2 + 2 * i])
  if span > longest then longest = span end
  local log = p .. ':log:' .. i
  redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%.3f', at - span))
  local count = redis.call('ZCARD', log)
  if count >= limit then
    local oldest = redis.call('ZRANGE', log, count - limit, count - limit, 'WITHSCORES')
    local bound = tonumber(oldest[2]) + span
    if bound > at then at = bound end
  end
end
if at - nextv > spacing / 2 then nextv = at end
nextv = nextv + spacing
local seq = redis.call('INCR', p .. ':seq')
local ttl = math.ceil(longest + at - now) + 1000
for i = 1, n do
  local log = p .. ':log:' .. i
  redis.call('ZADD', log, string.format('%.3f', at), seq)
  -- Only the newest limit entries are ever looked at.
  redis.call('ZREMRANGEBYRANK', log, 0, -(tonumber(ARGV[1 + 2 * i]) + 1))
  redis.call('PEXPIRE', log, ttl)
end
redis.call('SET', p .. ':next', string.format('%.3f', nextv), 'PX', ttl)
redis.call('PEXPIRE', p .. ':seq', ttl)
return string.format('%.3f', at - now)
`;

const PAUSE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local untilv = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1] .. ':pause') or '0')
if untilv > cur then
  redis.call('SET', KEYS[1] .. ':pause', string.format('%.3f', untilv), 'PX', math.ceil(tonumber(ARGV[1])) + 1000)
end
return 1
`;

const PAUSE_LEFT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local cur = tonumber(redis.call('GET', KEYS[1] .. ':pause') or '0')
return string.format('%.3f', math.max(0, cur - now))
`;

/**
 * A store that came back without a key's reservations is told what the target still counts: window
 * ARGV[1]'s log is made to hold at least ARGV[2] sends that count for ARGV[3] ms more (limit ARGV[4],
 * span ARGV[5]). Generators that all write their word keep the largest, not the sum: the sends are
 * the same ones, told by each.
 */
const RESEED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local log = KEYS[1] .. ':log:' .. ARGV[1]
local want = tonumber(ARGV[2])
local span = tonumber(ARGV[5])
local at = now + tonumber(ARGV[3]) - span
local have = redis.call('ZCOUNT', log, string.format('%.3f', now - span), '+inf')
for j = have + 1, math.min(want, tonumber(ARGV[4])) do
  redis.call('ZADD', log, string.format('%.3f', at), 'told:' .. j)
end
local ttl = math.ceil(tonumber(ARGV[3])) + 1000
if want > have and redis.call('PTTL', log) < ttl then redis.call('PEXPIRE', log, ttl) end
return want - have
`;

/**
 * Sends that left without the store (`--store-outage local-share`), told to it once it is back: each
 * at its own time (ARGV[3..]: ms ago), in every window's log, under members of this generator's own
 * (ARGV[1]) so that every generator's are added up. ARGV[2]: the number of windows; then per window
 * its limit and span, then the sends.
 */
const TELL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local n = tonumber(ARGV[2])
local first = 3 + 2 * n
for i = 1, n do
  local limit = tonumber(ARGV[1 + 2 * i])
  local span = tonumber(ARGV[2 + 2 * i])
  local log = KEYS[1] .. ':log:' .. i
  for j = first, #ARGV do
    local at = now - tonumber(ARGV[j])
    if at > now - span then redis.call('ZADD', log, string.format('%.3f', at), ARGV[1] .. ':' .. j) end
  end
  redis.call('ZREMRANGEBYRANK', log, 0, -(limit + 1))
  if redis.call('PTTL', log) < span then redis.call('PEXPIRE', log, math.ceil(span) + 1000) end
end
return 1
`;

interface QuotaCommands {
  petstoreReserve(key: string, ...args: (string | number)[]): Promise<string>;
  petstorePause(key: string, ms: number): Promise<number>;
  petstorePauseLeft(key: string): Promise<string>;
  petstoreReseed(key: string, ...args: (string | number)[]): Promise<number>;
  petstoreTell(key: string, ...args: (string | number)[]): Promise<number>;
}

/** Redis keys never hold an API key: a digest of it names the shared state. */
export function quotaKeyName(apiKey: string): string {
  return `petstore-load:quota:${createHash('sha256').update(apiKey).digest('hex').slice(0, 24)}`;
}

/**
 * A key's quota in Redis (`--quota-store redis://HOST:PORT`): every generator that names the same
 * store and key paces as one client and pauses together after any one's 429.
 */
export class RedisQuotaStore implements QuotaStore {
  /** Its outages: once connected, a lost store is waited for and met again, never sent around. */
  readonly watch: StoreWatch;
  private readonly redis: Redis & QuotaCommands;

  private constructor(redis: Redis & QuotaCommands, serverId: string) {
    this.redis = redis;
    this.watch = new StoreWatch(() => serverRunId(redis), serverId);
    // A drop is an outage even when no send meets it: a store restarted between two sends is found
    // out by the probe after it, which compares the server that answers with the one that was lost.
    redis.on('close', () => this.watch.lost(now()));
  }

  /** Connects, or fails within `timeoutMs` with the reason (a run must not start unshared). */
  static async connect(url: string, timeoutMs = 3000): Promise<RedisQuotaStore> {
    const redis = (await connectRedis(url, { timeoutMs, persistent: true })) as Redis & QuotaCommands;
    redis.defineCommand('petstoreReserve', { numberOfKeys: 1, lua: RESERVE });
    redis.defineCommand('petstorePause', { numberOfKeys: 1, lua: PAUSE });
    redis.defineCommand('petstorePauseLeft', { numberOfKeys: 1, lua: PAUSE_LEFT });
    redis.defineCommand('petstoreReseed', { numberOfKeys: 1, lua: RESEED });
    redis.defineCommand('petstoreTell', { numberOfKeys: 1, lua: TELL });
    try {
      return new RedisQuotaStore(redis, await serverRunId(redis));
    } catch (error) {
      redis.disconnect();
      throw error;
    }
  }

  async reserve(key: string, spec: QuotaSpec): Promise<number> {
    const args: (string | number)[] = [spec.spacingMs, spec.windows.length];
    for (const w of spec.windows) args.push(w.limit, w.spanMs);
    return Number(await this.asked(() => this.redis.petstoreReserve(key, ...args)));
  }

  async pauseLeft(key: string): Promise<number> {
    return Number(await this.asked(() => this.redis.petstorePauseLeft(key)));
  }

  async pause(key: string, ms: number): Promise<void> {
    await this.asked(() => this.redis.petstorePause(key, Math.max(0, ms)));
  }

  async reseed(key: string, spec: QuotaSpec, index: number, count: number, forMs: number): Promise<void> {
    const w = spec.windows[index];
    if (!w || count <= 0 || forMs <= 0) return;
    await this.asked(() => this.redis.petstoreReseed(key, index + 1, count, forMs, w.limit, w.spanMs));
  }

  async tell(key: string, spec: QuotaSpec, agoMs: readonly number[]): Promise<void> {
    if (agoMs.length === 0) return;
    const args: (string | number)[] = [`sent:${randomUUID()}`, spec.windows.length];
    for (const w of spec.windows) args.push(w.limit, w.spanMs);
    await this.asked(() => this.redis.petstoreTell(key, ...args, ...agoMs.map((ms) => Math.max(0, ms))));
  }

  async knows(key: string): Promise<boolean> {
    return (await this.asked(() => this.redis.exists(`${key}:next`))) === 1;
  }

  /**
   * A command, and when it was asked: one that fails (unanswered past STORE_SILENT_MS, or met a
   * drop) shows the store silent since then, not since the failure.
   */
  private async asked<T>(command: () => Promise<T>): Promise<T> {
    const at = now();
    try {
      return await command();
    } catch (error) {
      this.watch.lost(at);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.watch.close();
    // A store that is away has nothing to say goodbye to.
    if (this.redis.status !== 'ready') return this.redis.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
