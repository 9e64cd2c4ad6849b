import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis } from '../api/redis.ts';
import type { QuotaSpec, QuotaStore } from './quota-store.ts';

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

interface QuotaCommands {
  petstoreReserve(key: string, ...args: (string | number)[]): Promise<string>;
  petstorePause(key: string, ms: number): Promise<number>;
  petstorePauseLeft(key: string): Promise<string>;
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
  private constructor(private readonly redis: Redis & QuotaCommands) {}

  /** Connects, or fails within `timeoutMs` with the reason (a run must not start unshared). */
  static async connect(url: string, timeoutMs = 3000): Promise<RedisQuotaStore> {
    const redis = (await connectRedis(url, timeoutMs)) as Redis & QuotaCommands;
    redis.defineCommand('petstoreReserve', { numberOfKeys: 1, lua: RESERVE });
    redis.defineCommand('petstorePause', { numberOfKeys: 1, lua: PAUSE });
    redis.defineCommand('petstorePauseLeft', { numberOfKeys: 1, lua: PAUSE_LEFT });
    return new RedisQuotaStore(redis);
  }

  async reserve(key: string, spec: QuotaSpec): Promise<number> {
    const args: (string | number)[] = [spec.spacingMs, spec.windows.length];
    for (const w of spec.windows) args.push(w.limit, w.spanMs);
    return Number(await this.redis.petstoreReserve(key, ...args));
  }

  async pauseLeft(key: string): Promise<number> {
    return Number(await this.redis.petstorePauseLeft(key));
  }

  async pause(key: string, ms: number): Promise<void> {
    await this.redis.petstorePause(key, Math.max(0, ms));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
