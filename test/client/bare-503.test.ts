import { afterEach, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient, type Transport } from '../../src/client/client.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';

/**
 * A 503 that says nothing of a limiter may be a headerless limiter's refusal or an overloaded
 * target: the key keeps away as after a refusal (its pause, the ban guard), but the call is tried
 * again only as after a 5xx: an idempotent method, within its attempts and the retry budget. A POST
 * that reached the server is never sent twice; a 503 with Retry-After is the limiter's refusal, and
 * tried again after it whatever the method, as a 429 is.
 */

const operations = (await loadSpec()).operations;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

/** A client whose every answer is `status` with `headers`, its attempts kept. */
function answering(status: number, headers: Record<string, string> = {}) {
  const attempts: AttemptRecord[] = [];
  const transport: Transport = async () => ({
    status,
    headers: { 'content-type': 'application/json', ...headers },
    text: '{}',
  });
  client = new ApiClient({
    baseUrl: 'http://127.0.0.1:9',
    apiKey: 'own-key',
    keyLabel: 'own',
    operations,
    windows: [{ name: 'w', limit: 1000, seconds: 1 }],
    sink: { record: (a) => attempts.push(a) },
    transport,
    maxAttempts: 2,
    maxRateLimitRetries: 2,
    // The pause after a bare 503 kept short: what is under test is whether the call goes again.
    rateLimitBackoffBaseMs: 5,
    rateLimitBackoffCapMs: 10,
  });
  return { client, attempts };
}

const pet = { body: { name: 'Rex', categoryId: 1, status: 'available' } };

describe('a bare 503', () => {
  it('is kept away from, then a GET tried again within its attempts, never a POST', async () => {
    const get = answering(503);
    expect((await get.client.call('listPets')).status).toBe(503);
    expect(get.attempts.map((a) => [a.kind, a.retried])).toEqual([
      ['unexplained', true],
      ['unexplained', false],
    ]);
    // The key's pause was kept, as after a refusal: the retry left no sooner.
    const [first, second] = get.attempts as [AttemptRecord, AttemptRecord];
    expect(first.pauseUntil).toBeDefined();
    expect(second.sentAt).toBeGreaterThanOrEqual(first.pauseUntil as number);
    await get.client.close();

    const post = answering(503);
    expect((await post.client.call('createPet', pet)).status).toBe(503);
    expect(post.attempts.map((a) => [a.kind, a.retried])).toEqual([['unexplained', false]]);
    await post.client.close();

    // A setup's POST is: a record it makes twice harms less than a run that cannot start.
    const setup = answering(503);
    setup.client.preparing(true);
    expect((await setup.client.call('createPet', pet)).status).toBe(503);
    expect(setup.attempts.map((a) => [a.kind, a.retried])).toEqual([
      ['unexplained', true],
      ['unexplained', false],
    ]);
  });

  it("with Retry-After is the limiter's refusal: tried again after it whatever the method, within its refusal retries", async () => {
    const post = answering(503, { 'retry-after': '0' });
    expect((await post.client.call('createPet', pet)).status).toBe(503);
    expect(post.attempts.map((a) => a.kind)).toEqual(['refused', 'refused', 'refused']);
  });
});
