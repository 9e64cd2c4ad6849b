import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveSpacing, type SpacingStart, withMargin } from '../../src/client/adaptive-spacing.ts';
import { Pacer, PacerPlan } from '../../src/client/pacer.ts';
import { type LogWindow, quotaLog, quotaLogs } from '../../src/client/quota-log.ts';

/**
 * A key of a tenant mix keeps its state small: the quota log grows with the sends made, one ring
 * serves every window, and the gap learning keeps only unanswered sends. Each is checked against the
 * fixed-size form it replaced (copied here as it was), which allocated the whole limit up front.
 */

/** The exact log as it was: a Float64Array of the whole limit, one per window. */
class FixedSendLog {
  private readonly times: Float64Array;
  private next = 0;
  private count = 0;
  readonly limit: number;
  readonly spanMs: number;

  constructor(limit: number, spanMs: number) {
    this.limit = limit;
    this.spanMs = spanMs;
    this.times = new Float64Array(limit);
  }
  earliest(): number {
    return this.count < this.limit
      ? Number.NEGATIVE_INFINITY
      : (this.times[this.next] as number) + this.spanMs;
  }
  add(at: number): void {
    this.times[this.next] = at;
    this.next = (this.next + 1) % this.limit;
    if (this.count < this.limit) this.count++;
  }
}

/** The bucket log as it was, its buckets allocated at once. */
class EagerBucketLog {
  private static readonly BUCKETS = 1000;
  private readonly counts = new Float64Array(EagerBucketLog.BUCKETS);
  private readonly bucketMs: number;
  private current = -1;
  private total = 0;
  readonly limit: number;
  readonly spanMs: number;

  constructor(limit: number, spanMs: number) {
    this.limit = limit;
    this.spanMs = spanMs;
    this.bucketMs = spanMs / EagerBucketLog.BUCKETS;
  }
  private advance(at: number): void {
    const B = EagerBucketLog.BUCKETS;
    const index = Math.floor(at / this.bucketMs);
    if (this.current < 0) this.current = index;
    for (let i = this.current + 1; i <= index && i <= this.current + B; i++) {
      this.total -= this.counts[i % B] as number;
      this.counts[i % B] = 0;
    }
    if (index > this.current) this.current = index;
  }
  earliest(): number {
    const B = EagerBucketLog.BUCKETS;
    if (this.total < this.limit) return Number.NEGATIVE_INFINITY;
    for (let i = this.current - B + 1; i <= this.current; i++)
      if ((this.counts[((i % B) + B) % B] as number) > 0) return (i + 1) * this.bucketMs + this.spanMs;
    return Number.NEGATIVE_INFINITY;
  }
  add(at: number): void {
    this.advance(at);
    const slot = this.current % EagerBucketLog.BUCKETS;
    this.counts[slot] = (this.counts[slot] as number) + 1;
    this.total++;
  }
}

/** The gap learning as it was: a fixed ring of the last 256 send times. */
class FixedRingSpacing {
  private floorMs: number;
  private capMs = 0;
  private recoveryPerAnswer = 0;
  private decreases = 0;
  private inferred: 'gcra' | undefined;
  consecutive = 0;
  private last429At = Number.NEGATIVE_INFINITY;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private readonly sentAt = new Float64Array(256).fill(Number.NaN);
  private readonly start: SpacingStart;

  constructor(start: SpacingStart) {
    this.start = start;
    this.floorMs = start.floorMs;
  }
  earliest(): number {
    const gap = Math.max(this.floorMs, this.capMs);
    return gap > 0 ? this.lastSentAt + gap : Number.NEGATIVE_INFINITY;
  }
  sent(seq: number, at: number): void {
    this.sentAt[seq % 256] = at;
    if (at > this.lastSentAt) this.lastSentAt = at;
  }
  private gapBefore(seq: number): number | undefined {
    const gap = (this.sentAt[seq % 256] as number) - (this.sentAt[(seq - 1) % 256] as number);
    return seq > 1 && Number.isFinite(gap) && gap >= 0 ? gap : undefined;
  }
  rateLimited(seq: number, told: boolean, planGapMs: number, intervalMs: number, at: number): void {
    this.consecutive++;
    this.last429At = Math.max(this.last429At, at);
    const gap = this.gapBefore(seq);
    const soon = gap !== undefined && gap <= intervalMs * 1.25;
    if (this.start.learnFloor && soon && gap + 1 >= this.floorMs) {
      if (planGapMs > 0) this.inferred = 'gcra';
      this.floorMs = Math.max(this.floorMs, withMargin(Math.max(gap, planGapMs)));
    }
    const nearPlan = gap !== undefined && gap < planGapMs * 1.25;
    if (told || (nearPlan && this.consecutive === 1)) return;
    const current = Math.max(this.capMs, this.floorMs, gap ?? 0, planGapMs);
    if (!(current > 0)) return;
    this.capMs = current * 2;
    this.recoveryPerAnswer = 0.1 / this.capMs;
    this.decreases++;
  }
  answered(seq: number): void {
    if ((this.sentAt[seq % 256] as number) > this.last429At) this.consecutive = 0;
    if (this.capMs === 0) return;
    this.capMs = 1 / (1 / this.capMs + this.recoveryPerAnswer);
    if (this.capMs <= this.floorMs || this.capMs < 1) this.capMs = 0;
  }
  state() {
    return {
      inferred: this.inferred,
      floorMs: this.floorMs,
      capMs: this.capMs,
      decreases: this.decreases,
      maxInFlight: undefined,
      concurrencyCuts: 0,
    };
  }
}

const windowArb = fc.record({
  limit: fc.integer({ min: 1, max: 40 }),
  spanMs: fc.integer({ min: 1, max: 400 }),
});
/** Send times as gaps from the one before (0: at the same time). */
const gapsArb = fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 400 });

describe('the quota log grows with the sends made and stays exact', () => {
  it('one ring over every window says what a fixed log per window said, after every send', () => {
    fc.assert(
      fc.property(fc.array(windowArb, { minLength: 1, maxLength: 3 }), gapsArb, (windows, gaps) => {
        const log = quotaLogs(windows);
        const fixed = windows.map((w) => new FixedSendLog(w.limit, w.spanMs));
        let at = 1_800_000_000_000;
        for (const gap of gaps) {
          at += gap;
          log.add(at);
          for (const f of fixed) f.add(at);
          expect(log.earliest()).toBe(Math.max(...fixed.map((f) => f.earliest())));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a single window, as the shared quota store keeps it, likewise', () => {
    fc.assert(
      fc.property(windowArb, gapsArb, (w, gaps) => {
        const log = quotaLog(w.limit, w.spanMs);
        const fixed = new FixedSendLog(w.limit, w.spanMs);
        let at = 0;
        for (const gap of gaps) {
          at += gap;
          log.add(at);
          fixed.add(at);
          expect(log.earliest()).toBe(fixed.earliest());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a window beyond the exact limit keeps its buckets exactly as if made at once, beside an exact one', () => {
    const windows: LogWindow[] = [
      { limit: 30, spanMs: 50 },
      { limit: 100_001, spanMs: 20_000 },
    ];
    const log = quotaLogs(windows);
    const exact = new FixedSendLog(30, 50);
    const buckets = new EagerBucketLog(100_001, 20_000);
    let at = 1_800_000_000_000;
    for (let i = 0; i < 100_400; i++) {
      // Bursts and gaps: some buckets empty, the sum crosses the limit within the span.
      at += i % 1000 === 0 ? 7 : 0.1;
      log.add(at);
      exact.add(at);
      buckets.add(at);
      if (i < 300 || i > 99_900 || i % 997 === 0)
        expect(log.earliest()).toBe(Math.max(exact.earliest(), buckets.earliest()));
    }
    expect(buckets.earliest()).toBeGreaterThan(at);
  });
});

describe('the gap learning keeps only unanswered sends, and learns what the fixed ring learned', () => {
  type Op = { kind: 'send'; gap: number } | { kind: 'answer' | '429' | 'told' | 'error'; pick: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('send' as const), gap: fc.integer({ min: 0, max: 3000 }) }),
    fc.record({
      kind: fc.constantFrom('answer' as const, '429' as const, 'told' as const, 'error' as const),
      pick: fc.nat(),
    }),
  );

  it('same gaps, caps, floors and 429s in a row, whatever the order answers come in', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 300 }),
        fc.constantFrom<SpacingStart>(
          { floorMs: 0, learnFloor: true },
          { floorMs: 0, learnFloor: false },
          { floorMs: 1015, learnFloor: false },
        ),
        fc.constantFrom(0, 1000),
        (ops, start, planGapMs) => {
          const compact = new AdaptiveSpacing(start);
          const fixed = new FixedRingSpacing(start);
          const pending: number[] = [];
          let seq = 0;
          let at = 1_800_000_000_000;
          for (const op of ops) {
            if (op.kind === 'send') {
              // The fixed ring forgets past 256 unanswered: stay within it.
              if (pending.length >= 200) continue;
              at += op.gap;
              seq++;
              compact.sent(seq, at);
              fixed.sent(seq, at);
              pending.push(seq);
            } else {
              if (pending.length === 0) continue;
              const [s] = pending.splice(op.pick % pending.length, 1) as [number];
              at += 3;
              if (op.kind === 'answer') {
                compact.answered(s, at);
                fixed.answered(s);
              } else if (op.kind === 'error') {
                compact.forget(s);
              } else {
                compact.rateLimited(s, op.kind === 'told', planGapMs, 1000, at);
                fixed.rateLimited(s, op.kind === 'told', planGapMs, 1000, at);
              }
            }
            expect(compact.state()).toEqual(fixed.state());
            expect(compact.consecutive).toBe(fixed.consecutive);
            expect(compact.earliest()).toBe(fixed.earliest());
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('keys of one plan share its constants', () => {
  it('pacers built from one PacerPlan share its quota spec, and each keeps its own sends', () => {
    const plan = new PacerPlan({
      windows: [{ name: 'second', limit: 2, seconds: 1 }],
      enforce: true,
      guardMs: 0,
    });
    const a = new Pacer(plan);
    const b = new Pacer(plan);
    expect(a.quotaSpec()).toBe(b.quotaSpec());
    expect(a.options).toBe(b.options);
    const t = 1_800_000_000_000;
    a.sent(t);
    a.sent(t + 500);
    // a's window is full until its first send is a window old; b has sent nothing.
    expect(a.earliest(t + 600).at).toBe(t + 1000);
    expect(b.earliest(t + 600)).toEqual({ at: t + 600, cause: 'ready' });
  });
});
