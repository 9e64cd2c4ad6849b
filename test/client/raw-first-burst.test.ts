import { describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient } from '../../src/client/client.ts';
import { now } from '../../src/client/clock.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { startServer } from '../../src/server/index.ts';

/**
 * Raw mode's first burst: a run that starts behind its schedule (a loaded machine) has all its
 * virtual users call at once, before any answer has told the key anything. Against a GCRA (one slot
 * per 100 ms here) every request past the first is a 429, and the reference server bans at the
 * seventh strike: CI once saw a run of 8 users end with 1 request admitted and the key banned.
 */

// A minute of 6 s: a GCRA of 60 a minute admits one request per 100 ms, no burst.
const TIME_SCALE = 10;
const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 60, perDay: 100_000 } });

/** The most attempts ever in flight together (sent, not yet answered). */
function mostInFlight(attempts: readonly AttemptRecord[]): number {
  let most = 0;
  for (const a of attempts) {
    const at = a.sentAt;
    const n = attempts.filter((b) => b.sentAt <= at && at < b.receivedAt).length;
    most = Math.max(most, n);
  }
  return most;
}

describe('raw mode, before any answer', () => {
  // Side by side: each waits out its 429s' Retry-After of a second, a few times.
  it.concurrent.each(['seed', 'none'] as const)(
    'sends no more than maxOvershoot + 1 at once to a GCRA told as %s, and is never banned',
    async (dialect) => {
      const server = await startServer({
        plans: PLANS,
        timeScale: TIME_SCALE,
        seedData: 3,
        limiter: 'gcra',
        headerDialect: dialect,
      });
      const attempts: AttemptRecord[] = [];
      const client = new ApiClient({
        baseUrl: server.url,
        apiKey: 'free-demo-key',
        keyLabel: 'free',
        operations: (await loadSpec()).operations,
        windows: scalePlan(getPlan(PLANS, 'free'), TIME_SCALE).windows,
        enforce: false,
        // Each round after a pause admits one and may refuse two: a call may meet more 429s than
        // the default 5 before its turn, which is not what this test is about.
        maxRateLimitRetries: 20,
        sink: { record: (a) => attempts.push(a) },
      });
      // A ban would hold the key for a scaled 10 minutes: sends that cannot leave within 30 s fail.
      client.closeAt(now() + 30_000);
      const replies = await Promise.allSettled(
        Array.from({ length: 8 }, () => client.call('listPets')),
      ).finally(async () => {
        await client.close();
        await server.close();
      });
      const banned = attempts.filter(
        (a) =>
          a.status === 429 && (a.body.json as { code?: string } | undefined)?.code === 'temporarily_banned',
      );
      const figures = JSON.stringify(attempts.map((a) => a.status));
      expect(banned, figures).toEqual([]);
      expect(mostInFlight(attempts), figures).toBeLessThanOrEqual(3);
      // Every call got through in the end: each 429 paused the key for its Retry-After, then one
      // request at a time until one was admitted.
      expect(
        replies.map((r) => (r.status === 'fulfilled' ? r.value.status : String(r.reason))),
        figures,
      ).toEqual(Array(8).fill(200));
    },
    60_000,
  );
});
