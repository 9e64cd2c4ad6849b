import { describe, expect, it } from 'vitest';
import { parseLimiter } from '../../src/api/limiter-kinds.ts';
import type { RateWindow } from '../../src/api/plans.ts';
import { quotaState, readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { ConcurrencyLimit } from '../../src/client/concurrency-limit.ts';
import { Pacer } from '../../src/client/pacer.ts';

const T0 = 1_800_000_000_000;
/** A plan that does not bind: 6000 a minute, one request per 10 ms. */
const LOOSE: RateWindow[] = [{ name: 'minute', limit: 6000, seconds: 60 }];

/** `n` sends at `at`, their sequence numbers. */
function sendAll(p: Pacer, n: number, at: number): number[] {
  return Array.from({ length: n }, () => p.sent(at));
}

const blocked = (p: Pacer, at: number) => p.earliest(at).at === Number.POSITIVE_INFINITY;

describe('ConcurrencyLimit', () => {
  it('a 429 at level k caps below k; one sent at a level the cap already forbids teaches nothing', () => {
    const c = new ConcurrencyLimit();
    c.refused(3, T0);
    expect(c.cap).toBe(2);
    c.refused(4, T0);
    expect([c.cap, c.cuts]).toEqual([2, 1]);
    c.refused(2, T0 + 10);
    expect([c.cap, c.cuts]).toEqual([1, 2]);
  });

  it('creeps back up by one only after a minute and a run of answers; a probe refused again doubles the spell', () => {
    const c = new ConcurrencyLimit();
    c.refused(3, T0);
    for (let i = 1; i <= 200; i++) c.answered(T0 + i * 100);
    // 200 answers over 20 s: not yet a minute.
    expect(c.cap).toBe(2);
    for (let i = 1; i <= 400; i++) c.answered(T0 + 20_000 + i * 100);
    expect(c.cap).toBe(3);
    c.refused(3, T0 + 61_000);
    expect(c.cap).toBe(2);
    // The next probe waits two minutes from this cut.
    for (let i = 1; i <= 1000; i++) c.answered(T0 + 61_000 + i * 100);
    expect(c.cap).toBe(2);
    for (let i = 1; i <= 300; i++) c.answered(T0 + 161_000 + i * 100);
    expect(c.cap).toBe(3);
  });

  it('a cap told is never probed past, and a lone refusal keeps it', () => {
    const c = new ConcurrencyLimit(4);
    for (let i = 1; i <= 2000; i++) c.answered(T0 + i * 1000);
    expect(c.cap).toBe(4);
    c.refusedAlone(Number.POSITIVE_INFINITY);
    expect(c.cap).toBe(4);
  });

  it('a lone refusal drops a learned cap only when its limiter explains the 429s that set it', () => {
    const c = new ConcurrencyLimit();
    c.refused(3, T0, 300);
    // A rate between sends of one per 100 ms does not refuse a send 300 ms after the one before.
    c.refusedAlone(100);
    expect(c.cap).toBe(2);
    // One per 500 ms does: the cap's 429s were the rate's.
    c.refusedAlone(500);
    expect(c.cap).toBe(Number.POSITIVE_INFINITY);
    // A window refuses whatever the gap.
    c.refused(2, T0 + 1000, 5000);
    c.refusedAlone(Number.POSITIVE_INFINITY);
    expect(c.cap).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('the pacer against a concurrency limit', () => {
  it('learns the cap from 429s that came while others were in flight, and holds sends to it', () => {
    const p = new Pacer({ windows: LOOSE, enforce: true });
    // Four virtual users at once: nginx limit_conn 2 admits two and refuses the third and fourth.
    const [s1, s2, s3, s4] = sendAll(p, 4, T0) as [number, number, number, number];
    p.observe(s3, undefined, T0 + 2, 'refused');
    p.rateLimited(s3, false, T0 + 2);
    p.observe(s4, undefined, T0 + 2, 'refused');
    p.rateLimited(s4, false, T0 + 2);
    const learned = p.spacingState();
    expect(learned).toMatchObject({ maxInFlight: 2, concurrencyCuts: 1, decreases: 0, floorMs: 0 });
    // Not a GCRA: no gap learned, no rate halved.
    expect(learned.inferred).toBeUndefined();
    p.observe(s1, undefined, T0 + 300, 'admitted');
    p.observe(s2, undefined, T0 + 300, 'admitted');
    // Two in flight again: the third waits for an answer, whatever the rate would allow.
    const [a, b] = sendAll(p, 2, T0 + 2000) as [number, number];
    expect(blocked(p, T0 + 2000)).toBe(true);
    p.observe(a, undefined, T0 + 2300, 'admitted');
    expect(blocked(p, T0 + 2300)).toBe(false);
    p.observe(b, undefined, T0 + 2300, 'admitted');
  });

  it('a lone request refused is a rate or a window: a cap learned before is dropped, and the gap learns', () => {
    const p = new Pacer({ windows: LOOSE, enforce: true });
    const [s1, s2] = sendAll(p, 2, T0) as [number, number];
    p.observe(s2, undefined, T0 + 1, 'refused');
    p.rateLimited(s2, false, T0 + 1);
    expect(p.spacingState().maxInFlight).toBe(1);
    p.observe(s1, undefined, T0 + 5, 'admitted');
    const s3 = p.sent(T0 + 6);
    p.observe(s3, undefined, T0 + 7, 'refused');
    p.rateLimited(s3, false, T0 + 7);
    const state = p.spacingState();
    expect(state.maxInFlight).toBeUndefined();
    expect(state.floorMs).toBeGreaterThan(0);
  });

  it('a 429 that tells a wait but shows quota left (a secondary limit) also lowers the cap; one with none left is a window', () => {
    const p = new Pacer({ windows: LOOSE, enforce: true });
    const [, , s3] = sendAll(p, 3, T0) as [number, number, number];
    p.observe(s3, undefined, T0 + 1, 'refused');
    p.rateLimited(s3, true, T0 + 1, true);
    expect(p.spacingState().maxInFlight).toBe(2);
    const w = new Pacer({ windows: LOOSE, enforce: true });
    const [, , t3] = sendAll(w, 3, T0) as [number, number, number];
    w.observe(t3, undefined, T0 + 1, 'refused');
    w.rateLimited(t3, true, T0 + 1, false);
    expect(w.spacingState().maxInFlight).toBeUndefined();
  });

  it('--limiter concurrency:2 holds two in flight from the first send; a GCRA given learns no cap', () => {
    const given = new Pacer({ windows: LOOSE, enforce: true, limiter: 'concurrency', maxInFlight: 2 });
    sendAll(given, 2, T0);
    expect(blocked(given, T0)).toBe(true);
    const gcra = new Pacer({ windows: LOOSE, enforce: false, limiter: 'gcra' });
    const [, second] = sendAll(gcra, 2, T0) as [number, number];
    gcra.observe(second, undefined, T0 + 1, 'refused');
    gcra.rateLimited(second, false, T0 + 1);
    expect(gcra.spacingState().maxInFlight).toBeUndefined();
  });

  it('a RateLimit-Policy counted in concurrent requests tells the cap', () => {
    const headers = {
      'ratelimit-policy': '"hour";q=1000;w=3600, "inflight";q=3;qu="concurrent-requests"',
      ratelimit: '"hour";r=990;t=1200, "inflight";r=0',
    };
    const view = readRateLimit(headers, T0);
    // The concurrent policy's r=0 is no request quota spent: the hour's 990 governs.
    expect(view).toMatchObject({ dialect: 'ietf-8', limit: 1000, remaining: 990, policy: 'hour' });
    const state = quotaState(view, T0);
    expect(state.maxInFlight).toBe(3);
    const p = new Pacer({ windows: LOOSE, enforce: true });
    const s1 = p.sent(T0);
    p.observe(s1, state, T0 + 5, 'admitted');
    sendAll(p, 3, T0 + 10);
    expect(blocked(p, T0 + 10)).toBe(true);
  });
});

describe('--limiter', () => {
  it('takes a kind, or concurrency:N', () => {
    expect(parseLimiter('gcra', '--limiter')).toEqual({ kind: 'gcra' });
    expect(parseLimiter('concurrency', '--limiter')).toEqual({ kind: 'concurrency' });
    expect(parseLimiter('concurrency:4', '--limiter')).toEqual({ kind: 'concurrency', maxInFlight: 4 });
  });

  it.each(['leaky', 'gcra:2', 'concurrency:0', 'concurrency:x', 'concurrency:2:3'])(
    "'%s' is refused in one line",
    (text) => {
      expect(() => parseLimiter(text, '--limiter')).toThrow(/^--limiter '.*': /);
    },
  );
});
