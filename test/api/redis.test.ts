import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { connectRedis, parseStoreAddress } from '../../src/api/redis.ts';
import { freePort } from '../helpers/free-port.ts';

describe('parseStoreAddress', () => {
  it('takes redis:// and a Sentinel group, and names them without credentials', () => {
    expect(parseStoreAddress('redis://user:secret@127.0.0.1:6379/2').label).toBe('redis://127.0.0.1:6379/2');
    const sentinel = parseStoreAddress('redis+sentinel://:secret@10.0.0.1:26379,10.0.0.2:26380/petstore');
    expect(sentinel.label).toBe('redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/petstore');
    expect(sentinel.label).not.toContain('secret');
  });

  it('refuses a Sentinel address without its master name, and other schemes, in one line naming the flag', () => {
    expect(() => parseStoreAddress('redis+sentinel://127.0.0.1:26379')).toThrow(InputError);
    expect(() => parseStoreAddress('redis+sentinel://127.0.0.1:26379')).toThrow(
      /^--quota-store: .*MASTER_NAME$/,
    );
    expect(() => parseStoreAddress('memcached://127.0.0.1:11211')).toThrow(/^--quota-store: only redis:\/\//);
    expect(() => parseStoreAddress('not a url')).toThrow(/^--quota-store: 'not a url' is not a URL/);
  });
});

describe('connectRedis', () => {
  it('says in words why a store cannot be reached, for a Redis and for sentinels alike, giving up rather than retrying for ever', async () => {
    const port = await freePort();
    await expect(connectRedis(`redis://127.0.0.1:${port}`, { timeoutMs: 500 })).rejects.toThrow(
      /^connection refused$/,
    );
    // Sentinels are asked again and again: the connect must give up at its own limit (500 ms) rather
    // than retry for ever; the test's timeout is the only clock, so a busy machine cannot fail it.
    await expect(
      connectRedis(`redis+sentinel://127.0.0.1:${port}/petstore`, { timeoutMs: 500, persistent: true }),
    ).rejects.toThrow(/^no sentinel answered$/);
  }, 15_000);
});
