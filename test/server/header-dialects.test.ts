import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';
import { DIALECTS, readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { call, type Reply } from '../helpers/http.ts';

/**
 * The reference server telling its quota in each dialect the load side reads, as limiters in the
 * wild do: the same limiter, the same decisions, other fields. Real minutes (5 a minute for Free):
 * a burst of 6 meets the 429 whatever the machine's load.
 */

const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 5, perDay: 1000 } });
const HEADER_DIALECTS = [...DIALECTS, 'none'] as const;

const servers = new Map<string, RunningServer>();
const bursts = new Map<string, { replies: Reply[]; at: number[] }>();

beforeAll(async () => {
  for (const dialect of HEADER_DIALECTS) {
    const server = await startServer({ plans: PLANS, seedData: 1, headerDialect: dialect });
    servers.set(dialect, server);
    const replies: Reply[] = [];
    const at: number[] = [];
    for (let i = 0; i < 6; i++) {
      replies.push(await call(server.url, '/pets?limit=1'));
      at.push(Date.now());
    }
    bursts.set(dialect, { replies, at });
  }
});
afterAll(async () => {
  await Promise.all([...servers.values()].map((s) => s.close()));
});

describe('serve --headers: the quota told in each dialect', () => {
  it.each(DIALECTS)(
    '%s: read back as itself, Remaining counting down, Reset within the minute',
    (dialect) => {
      const { replies, at } = bursts.get(dialect) as { replies: Reply[]; at: number[] };
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
      const views = replies.map((r, i) => readRateLimit(r.headers, at[i] as number));
      for (const view of views) {
        expect(view).toMatchObject({ dialect, alsoSent: [], malformed: [], limit: 5 });
        // Whole seconds rounded up: never before the window's end, never past a minute and a second.
        expect(view.resetSeconds).toBeGreaterThanOrEqual(0);
        expect(view.resetSeconds).toBeLessThanOrEqual(61);
      }
      expect(views.map((v) => v.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      expect(replies[5]?.headers['retry-after']).toMatch(/^\d+$/);
      if (dialect.startsWith('ietf')) {
        expect(views[0]?.policies).toEqual([
          expect.objectContaining({ quota: 5, windowSeconds: 60 }),
          expect.objectContaining({ quota: 1000, windowSeconds: 86_400 }),
        ]);
      }
      // Only the dialect asked for: no X-RateLimit-* beside the IETF fields, nor the reverse.
      const names = Object.keys(replies[0]?.headers ?? {}).filter((h) => h.includes('ratelimit'));
      expect(
        names.every((h) => (dialect.startsWith('ietf') ? !h.startsWith('x-') : h.startsWith('x-'))),
      ).toBe(true);
    },
  );

  it('none: no quota fields at all, and still Retry-After on the 429', () => {
    const { replies, at } = bursts.get('none') as { replies: Reply[]; at: number[] };
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    for (const [i, r] of replies.entries()) {
      expect(readRateLimit(r.headers, at[i] as number).dialect).toBe('none');
      expect(Object.keys(r.headers).filter((h) => h.includes('ratelimit'))).toEqual([]);
    }
    expect(replies[5]?.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('refuses a dialect it does not know', async () => {
    await expect(startServer({ headerDialect: 'ietf-9' as never, plans: PLANS })).rejects.toThrow(
      /headerDialect must be one of seed, seconds-until/,
    );
  });
});
