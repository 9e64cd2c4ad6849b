import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, type Plan, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { isBanSignal, probeBan } from '../../src/capacity/measure/ban-probe.ts';
import type { ProbeReply } from '../../src/capacity/probe-client.ts';
import { petStoreProbe } from '../../src/capacity/probed-operation.ts';
import type { Transport } from '../../src/client/client.ts';
import type { ServerOptions } from '../../src/server/index.ts';
import { inSimulatedTime, simulatedServer } from '../helpers/simulated.ts';

/**
 * The ban probe waits out Retry-After, a ban and its end: it runs in simulated time against the
 * reference server answering in process (test/helpers/simulated.ts), so those seconds cost nothing.
 */

// A minute window of 1 s and a ban of 2 s: the whole probe takes a few seconds of simulated time.
const SCALE = 60;
const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 20, perDay: 1000 } });
/** Each answer takes a loopback's millisecond: at none, a request and its answer share one instant. */
const LOOPBACK_MS = 1;

// Read before any simulated run: a file read inside one would let its clock race ahead.
const spec = await loadSpec();
const listPets = petStoreProbe(spec.operations);

async function probe(server: Partial<ServerOptions>, maxWaitMs = 30_000) {
  const running = await simulatedServer(
    { timeScale: SCALE, plans: PLANS, banDurationMs: 120_000, ...server },
    LOOPBACK_MS,
  );
  try {
    return await inSimulatedTime(() =>
      probeBan({
        baseUrl: running.url,
        apiKey: 'free-demo-key',
        plan: scalePlan(PLANS.free as Plan, SCALE),
        timeScale: SCALE,
        probe: listPets,
        maxWaitMs,
        transport: running.transport,
      }),
    );
  } finally {
    await running.close();
  }
}

describe('capacity --probe-ban against the reference server', () => {
  it('finds the ban at the 6th request inside Retry-After, reads its announcement, and sees it end on time', async () => {
    const r = await probe({});
    expect(r.exhaust.first429At).toBe(21);
    expect(r.banned).toBe(true);
    // The documented rule: the 6th request after a 429, before its Retry-After, bans the key.
    expect(r.strikes.toBan).toBe(6);
    expect(r.ban?.status).toBe(429);
    expect(r.ban?.code).toBe('temporarily_banned');
    expect(r.ban?.remaining).toBe(0);
    // 2 s of ban, announced in whole seconds (rounded up).
    expect(r.ban?.announcedSeconds).toBeGreaterThanOrEqual(1.9);
    expect(r.ban?.announcedSeconds).toBeLessThanOrEqual(3);
    expect(r.ban?.waited).toBe(true);
    expect(r.ban?.endedAt).not.toBeNull();
    // Whole seconds again, and nothing more: simulated timers fire on time.
    expect(Math.abs(r.ban?.endErrorMs as number)).toBeLessThanOrEqual(1000);
    expect(r.requests).toBe(21 + 6 + (r.ban?.probes as number));
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
  }, 30_000);

  it('counts the strikes the target allows: with --ban-after 2 the 3rd request bans', async () => {
    const r = await probe({ banAfter: 2 });
    expect(r.strikes.toBan).toBe(3);
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
  }, 30_000);

  it('reports no ban, and stops, when the target allows more than 20 requests inside Retry-After', async () => {
    const r = await probe({ banAfter: 1000 });
    expect(r.banned).toBe(false);
    expect(r.strikes.sent).toBeLessThanOrEqual(20);
    expect(r.notes.join('; ')).toMatch(/no ban after \d+ request\(s\) inside Retry-After|came back/);
    expect(r.ban).toBeNull();
    expect(r.verdict).toBe('pass');
  }, 30_000);

  it('does not wait out a ban longer than --ban-max-wait, and says so', async () => {
    const r = await probe({}, 500);
    expect(r.banned).toBe(true);
    expect(r.ban?.waited).toBe(false);
    expect(r.ban?.endedAt).toBeNull();
    expect(r.notes.join('; ')).toMatch(/beyond --ban-max-wait/);
    expect(r.requests).toBe(21 + 6);
  }, 30_000);
});

/**
 * A target whose ban outlives what it announces: 20 a window, a 429 with Retry-After 1, the 3rd
 * request inside it bans for 2.5 s while every ban answer says Retry-After 1. No reference-server
 * option lies this way, so the test serves it itself, as a transport answering in process.
 */
function overrunningBan(): Transport {
  let admitted = 0;
  let limitedAt = 0;
  let strikes = 0;
  let bannedUntil = 0;
  const answer = (status: number, code: string, retryAfter?: number) => {
    const reset = Math.ceil(Date.now() / 1000) + (retryAfter ?? 1);
    const headers: IncomingHttpHeaders = {
      'content-type': 'application/json',
      'x-ratelimit-limit': '20',
      'x-ratelimit-remaining': String(Math.max(0, 20 - admitted)),
      'x-ratelimit-reset': String(reset),
      ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    };
    return { status, headers, text: JSON.stringify(status === 200 ? [] : { code, message: code, status }) };
  };
  return async () => {
    const t = Date.now();
    if (t < bannedUntil) return answer(429, 'temporarily_banned', 1);
    if (bannedUntil > 0) return answer(200, '');
    if (admitted < 20) {
      admitted++;
      return answer(200, '');
    }
    if (limitedAt === 0) limitedAt = t;
    if (++strikes >= 4) {
      bannedUntil = t + 2500;
      return answer(429, 'temporarily_banned', 1);
    }
    return answer(429, 'rate_limited', 1);
  };
}

describe('capacity --probe-ban against a ban that outlives its announcement', () => {
  it('fails: the ban lasted beyond the Retry-After it announced', async () => {
    const r = await inSimulatedTime(() =>
      probeBan({
        baseUrl: 'http://127.0.0.1:9',
        apiKey: 'any',
        plan: { name: 'free', windows: [{ name: 'minute', limit: 20, seconds: 60 }] },
        timeScale: 1,
        probe: listPets,
        maxWaitMs: 30_000,
        transport: overrunningBan(),
      }),
    );
    expect(r.strikes.toBan).toBe(3);
    expect(r.ban?.endedAt).not.toBeNull();
    expect(r.ban?.endErrorMs).toBeGreaterThan(1100);
    expect(r.verdict).toBe('fail');
    expect(r.reasons.join('; ')).toMatch(/the ban lasted \d+ ms beyond its announced end/);
  }, 30_000);
});

describe('what counts as a ban signal', () => {
  const reply = (over: Partial<ProbeReply>): ProbeReply => ({
    index: 1,
    status: 429,
    kind: 'refused',
    sentAt: 0,
    receivedAt: 1000,
    rateLimit: { limit: 60, remaining: 0, reset: undefined },
    retryAfterMs: 5000,
    hasRetryAfter: true,
    code: 'rate_limited',
    admittedSoFar: 0,
    ...over,
  });
  it('a 403, a code naming a ban, or a wait past the first 429’s; not a plain 429 or a 200', () => {
    const firstRetryAt = 6000;
    expect(isBanSignal(reply({}), firstRetryAt)).toBe(false);
    // A bare 403 refuses the key outright; a limiter's refusal in 403 is judged by its wait, as a 429.
    expect(isBanSignal(reply({ status: 403, kind: 'admitted', code: undefined }), firstRetryAt)).toBe(true);
    expect(isBanSignal(reply({ status: 403, code: undefined, retryAfterMs: 5900 }), firstRetryAt)).toBe(
      false,
    );
    expect(isBanSignal(reply({ code: 'temporarily_banned' }), firstRetryAt)).toBe(true);
    expect(isBanSignal(reply({ code: 'key_blocked' }), firstRetryAt)).toBe(true);
    expect(isBanSignal(reply({ code: undefined, retryAfterMs: 600_000 }), firstRetryAt)).toBe(true);
    expect(isBanSignal(reply({ code: undefined, retryAfterMs: 5900 }), firstRetryAt)).toBe(false);
    expect(isBanSignal(reply({ status: 200, kind: 'admitted', code: undefined }), firstRetryAt)).toBe(false);
  });
});
