import { describe, expect, it } from 'vitest';
import { Gcra, TokenBucket } from '../../src/api/limiter-models.ts';
import { distinctResets } from '../../src/capacity/measure/paced-window.ts';
import {
  IntervalCandidates,
  SEARCH_MAX_REFUSED,
  TARGET_WIDTH,
} from '../../src/capacity/measure/rate-search.ts';
import { QUIET_BACKOFF_FACTOR, type Shot } from '../../src/capacity/probe-client.ts';

/**
 * The interval search against the limiter models themselves, on a simulated clock: what the probe
 * does against nginx, without the network's time. A request reaches the limiter a little after it
 * is written (up to `jitterMs`: a busy machine schedules the limiter late), and an admitted one is
 * answered only once the upstream has answered, which may take long (`upstreamMs`, the first
 * answers of a run slowest): the next request of a burst leaves only then.
 */
interface Sim {
  intervalMs: number;
  burst: number;
  refused: number;
  probes: number;
}

function simulate(
  limiter: Gcra,
  planIntervalMs: number,
  o: { upstreamMs: number; jitterMs: number; seed: number },
): Sim {
  let seed = o.seed;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const shots: Shot[] = [];
  let t = 1_000_000;
  let answeredAt = t;
  let lastAdmitted = 0;
  let pauseUntil = 0;
  const send = (at: number): boolean => {
    const ok = limiter.admit('k', at + 0.1 + random() * o.jitterMs).allowed;
    shots.push({ at, admitted: ok });
    answeredAt = at + 0.3 + (ok ? (shots.length < 8 ? o.upstreamMs : 1) * (1 + random()) : 0);
    if (ok) lastAdmitted = at;
    // As the probe client: a refusal that tells nothing holds the key 1.5 times the gap it probed.
    else pauseUntil = answeredAt + Math.max(10, QUIET_BACKOFF_FACTOR * (at - lastAdmitted));
    return ok;
  };
  // Back to back, one at a time: each leaves when the answer before it is in.
  let admittedAtOnce = 0;
  while (send(t)) {
    admittedAtOnce++;
    t = answeredAt;
  }
  const candidates = new IntervalCandidates(4 * 60_000, admittedAtOnce);
  let refused = 0;
  let probes = 0;
  for (; probes < 30 && refused < SEARCH_MAX_REFUSED; probes++) {
    candidates.feed(shots);
    if (candidates.width() <= TARGET_WIDTH) break;
    t = candidates.nextAt(Math.max(answeredAt, pauseUntil + 1), planIntervalMs);
    if (!send(t)) refused++;
  }
  candidates.feed(shots);
  const estimate = candidates.estimate();
  if (!estimate) throw new Error('no candidate left');
  return { ...estimate, refused, probes };
}

describe('the interval search, against the limiter models', () => {
  it.each([
    ['a GCRA of burst 0 (nginx rate=120r/m)', () => new Gcra(120, 60_000, 0), 500, 0],
    ['a GCRA of burst 5 (burst=5 nodelay)', () => new Gcra(120, 60_000, 5), 500, 5],
    ['a token bucket of 20 at 10/s', () => new TokenBucket(10, 1000, 20), 100, 19],
    ['a GCRA twice as slow as its plan', () => new Gcra(60, 60_000, 0), 500, 0],
  ])('%s: the interval within 2%, the burst exact, few refusals', (_name, make, planIntervalMs, burst) => {
    for (const seed of [1, 2, 3]) {
      const limiter = make();
      const sim = simulate(limiter, planIntervalMs, { upstreamMs: 2, jitterMs: 2, seed });
      expect(Math.abs(sim.intervalMs / limiter.intervalMs - 1), `seed ${seed}`).toBeLessThanOrEqual(0.02);
      expect(sim.burst, `seed ${seed}`).toBe(burst);
      expect(sim.refused).toBeLessThanOrEqual(SEARCH_MAX_REFUSED);
    }
  });

  it('answers an overloaded upstream holds for 80 ms do not bias the interval', () => {
    for (const seed of [4, 5, 6]) {
      const limiter = new Gcra(120, 60_000, 5);
      const sim = simulate(limiter, 500, { upstreamMs: 80, jitterMs: 1, seed });
      expect(Math.abs(sim.intervalMs / limiter.intervalMs - 1), `seed ${seed}`).toBeLessThanOrEqual(0.02);
    }
  });
});

describe('distinct resets, to the headers’ precision', () => {
  it('counts a seconds-until reset read a little differently on every answer once, a moving one often', () => {
    const end = 1_000_000;
    // A fixed window told in whole seconds until its end, read at ten moments of the window.
    const fixed = Array.from({ length: 10 }, (_, i) => {
      const at = end - 5000 + i * 450;
      return at + Math.ceil((end - at) / 1000) * 1000;
    });
    expect(distinctResets(fixed)).toBe(1);
    // A sliding log: each request's reset is its own time plus the window.
    const sliding = Array.from({ length: 10 }, (_, i) => end + i * 600);
    expect(distinctResets(sliding)).toBeGreaterThanOrEqual(4);
  });
});
