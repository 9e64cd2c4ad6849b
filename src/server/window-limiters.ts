import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import {
  BURST_MODELS,
  createLimiterModel,
  type LimiterModel,
  type LimiterModelName,
} from '../api/limiter-models.ts';
import { type Plan, type RateWindow, shortestWindow } from '../api/plans.ts';

/*
 * A plan's windows, each under one algorithm, and the request taken on all of them or on none:
 * what a plan's quota says of one key. The plan limiter adds the keys, the shared bucket and the ban.
 */

export function isLimiterResult(value: unknown): value is RateLimiterRes {
  return typeof value === 'object' && value !== null && 'msBeforeNext' in value;
}

/** `--limiter` and `--burst`: the model of the plan's shortest window; `--longer-windows`: the others'. */
export interface LimiterChoice {
  name: LimiterModelName;
  burst?: number;
  /** sliding, sliding-counter: refused requests count too (on every sliding window). */
  countRefused?: boolean;
  /**
   * `--longer-windows sliding`: the plan's other windows shorter than this many (time-scaled)
   * seconds are sliding logs too, as frameworks keep several moving windows at once. The day stays a
   * fixed window: a log keeps a timestamp per request it counts, a day's quota of them per key.
   * Undefined: every window but the shortest is fixed.
   */
  slidingBelowSeconds?: number;
}

/** What one window says of an admitted request. */
export interface WindowState {
  window: RateWindow;
  /** The Limit told for it: the window's, or a bucket's size when that is larger. */
  limit: number;
  remaining: number;
  resetAt: number;
}

/** A window that refuses: from when it admits again, and when its whole quota is back. */
export interface Refusal {
  retryAt: number;
  resetAt: number;
}

/** One window of a plan under one algorithm. */
export interface WindowLimiter {
  readonly window: RateWindow;
  /** The Limit the headers tell for it. */
  readonly limit: number;
  /** Counts the request if the window admits it; a refused request leaves no trace. */
  take(key: string, now: number): Promise<WindowState | Refusal>;
  giveBack(key: string): Promise<void>;
  /** When the window admits again, if it is spent now. */
  spent(key: string, now: number): Promise<Refusal | undefined>;
  /** What the window says of the key now, counting nothing: Remaining is what it would admit. */
  peek(key: string, now: number): Promise<WindowState>;
}

export const isRefusal = (r: WindowState | Refusal): r is Refusal => 'retryAt' in r;

/** A fixed window on rate-limiter-flexible (in memory or in Redis). */
class FixedWindowLimiter implements WindowLimiter {
  readonly limit: number;
  readonly window: RateWindow;
  private readonly limiter: RateLimiterAbstract;
  private readonly leak: number;

  constructor(window: RateWindow, limiter: RateLimiterAbstract, leak: number) {
    this.window = window;
    this.limiter = limiter;
    this.leak = leak;
    this.limit = window.limit;
  }

  async take(key: string, now: number): Promise<WindowState | Refusal> {
    try {
      const res = await this.limiter.consume(key);
      return {
        window: this.window,
        limit: this.limit,
        remaining: Math.max(0, this.limit - res.consumedPoints),
        resetAt: now + Math.max(0, res.msBeforeNext),
      };
    } catch (error) {
      if (!isLimiterResult(error)) throw error;
      // The library counted it: a refused request must not count.
      await this.limiter.reward(key);
      const at = now + Math.max(0, error.msBeforeNext);
      return { retryAt: at, resetAt: at };
    }
  }

  async giveBack(key: string): Promise<void> {
    await this.limiter.reward(key);
  }

  async spent(key: string, now: number): Promise<Refusal | undefined> {
    const state = await this.limiter.get(key);
    if (!state || state.consumedPoints < this.window.limit + this.leak || state.msBeforeNext <= 0)
      return undefined;
    return { retryAt: now + state.msBeforeNext, resetAt: now + state.msBeforeNext };
  }

  async peek(key: string, now: number): Promise<WindowState> {
    const state = await this.limiter.get(key);
    // No state, or an ended one: the next request starts a fresh window.
    if (!state || state.msBeforeNext <= 0)
      return {
        window: this.window,
        limit: this.limit,
        remaining: this.limit,
        resetAt: now + this.window.seconds * 1000,
      };
    const remaining = Math.max(0, this.limit - state.consumedPoints);
    return { window: this.window, limit: this.limit, remaining, resetAt: now + state.msBeforeNext };
  }
}

/**
 * A window under one of the models of src/api/limiter-models.ts, in this process's memory. It is
 * consulted after the plan's other windows, so a request it admits is never taken back.
 */
class ModelWindowLimiter implements WindowLimiter {
  readonly limit: number;
  readonly window: RateWindow;
  /** A refused request counts in it too (a sliding log or counter with countRefused). */
  readonly countsRefused: boolean;
  private readonly model: LimiterModel;
  /** The fault's extra requests: admitted, never told, as under fixed windows. */
  private readonly leak: number;

  /** `capacity`: the model's without the fault's leak, what the headers may admit to. */
  constructor(
    window: RateWindow,
    model: LimiterModel,
    capacity: number,
    leak: number,
    countsRefused: boolean,
  ) {
    this.window = window;
    this.model = model;
    this.leak = leak;
    this.countsRefused = countsRefused;
    // Remaining never above Limit: a bucket larger than the window's limit is told as its size.
    this.limit = Math.max(window.limit, capacity);
  }

  async take(key: string, now: number): Promise<WindowState | Refusal> {
    return this.takeNow(key, now);
  }

  /** `take` without an await: the plan's model windows are decided together, nothing in between. */
  takeNow(key: string, now: number): WindowState | Refusal {
    const a = this.model.admit(key, now);
    if (!a.allowed) return { retryAt: now + a.retryAfterMs, resetAt: now + a.resetMs };
    const remaining = Math.max(0, a.remaining - this.leak);
    return { window: this.window, limit: this.limit, remaining, resetAt: now + a.resetMs };
  }

  async giveBack(): Promise<void> {
    throw new Error('a model window is consulted last and never gives a request back');
  }

  async spent(key: string, now: number): Promise<Refusal | undefined> {
    return this.spentNow(key, now);
  }

  spentNow(key: string, now: number): Refusal | undefined {
    const a = this.model.peek(key, now);
    return a.allowed ? undefined : { retryAt: now + a.retryAfterMs, resetAt: now + a.resetMs };
  }

  async peek(key: string, now: number): Promise<WindowState> {
    const a = this.model.peek(key, now);
    // The model's Remaining is after the request it imagines: the one more it would admit is added.
    const remaining = a.allowed ? Math.min(this.limit, Math.max(0, a.remaining + 1 - this.leak)) : 0;
    return { window: this.window, limit: this.limit, remaining, resetAt: now + a.resetMs };
  }
}

/**
 * The model named, on the window it applies to. `leak` (a fault) lets more through than the headers
 * tell: a burst or a limit larger by that much, while Limit stays the honest model's.
 */
function modelWindow(choice: LimiterChoice, window: RateWindow, leak: number): ModelWindowLimiter {
  const settings = {
    limit: window.limit,
    windowMs: window.seconds * 1000,
    countRefused: choice.countRefused,
  };
  const told = createLimiterModel(choice.name, { ...settings, burst: choice.burst });
  const burst = choice.burst ?? (choice.name === 'token-bucket' ? window.limit : 0);
  const leaky =
    leak === 0
      ? told
      : createLimiterModel(
          choice.name,
          BURST_MODELS.includes(choice.name)
            ? { ...settings, burst: burst + leak }
            : { ...settings, limit: window.limit + leak },
        );
  return new ModelWindowLimiter(window, leaky, told.capacity, leak, choice.countRefused === true);
}

/** A rate-limiter-flexible limiter, in this process's memory or in Redis. */
export type Factory = (o: {
  keyPrefix: string;
  points: number;
  duration: number;
  blockDuration?: number;
}) => RateLimiterAbstract;

/** A plan's windows as limiters, the modelled ones last (they cannot give a request back). */
export function planWindows(
  plan: Plan,
  choice: LimiterChoice,
  leak: number,
  limiter: Factory,
  prefix = '',
): WindowLimiter[] {
  const shortest = shortestWindow(plan.windows);
  const fixed: WindowLimiter[] = [];
  const modelled: WindowLimiter[] = [];
  for (const w of plan.windows) {
    const model = modelOf(w, w === shortest, choice);
    if (model) {
      modelled.push(modelWindow(model, w, leak));
      continue;
    }
    const keyPrefix = `${prefix}${plan.name}:${w.name}:${w.seconds}`;
    fixed.push(
      new FixedWindowLimiter(w, limiter({ keyPrefix, points: w.limit + leak, duration: w.seconds }), leak),
    );
  }
  return [...fixed, ...modelled];
}

/** The model of one window: `--limiter`'s on the shortest, a sliding log on a longer one if asked. */
function modelOf(w: RateWindow, shortest: boolean, choice: LimiterChoice): LimiterChoice | undefined {
  if (shortest) return choice.name === 'fixed' ? undefined : choice;
  if (choice.slidingBelowSeconds === undefined || w.seconds >= choice.slidingBelowSeconds) return undefined;
  return { name: 'sliding', countRefused: choice.countRefused };
}

/** The window closest to running out (on a tie, the one resetting later: the quota is back only then). */
export function closest(states: readonly WindowState[]): WindowState {
  let chosen = states[0] as WindowState;
  for (const s of states) {
    if (s.remaining < chosen.remaining || (s.remaining === chosen.remaining && s.resetAt > chosen.resetAt))
      chosen = s;
  }
  return chosen;
}

/**
 * Takes the request on every window, or on none: a refusal gives back what was taken before it.
 * The fixed windows go first, as they can give a request back; the model windows, which cannot,
 * are then decided together (takeModelled).
 */
export async function takeAll(
  limiters: readonly WindowLimiter[],
  key: string,
  now: number,
): Promise<WindowState[] | { by: WindowLimiter; refusal: Refusal }> {
  const states: WindowState[] = [];
  const taken: WindowLimiter[] = [];
  const models: ModelWindowLimiter[] = [];
  for (const limiter of limiters) {
    if (limiter instanceof ModelWindowLimiter) {
      models.push(limiter);
      continue;
    }
    const result = await limiter.take(key, now);
    if (isRefusal(result)) {
      for (const t of taken) await t.giveBack(key);
      return { by: limiter, refusal: result };
    }
    states.push(result);
    taken.push(limiter);
  }
  const modelled = takeModelled(models, key, now);
  if (Array.isArray(modelled)) return [...states, ...modelled];
  for (const t of taken) await t.giveBack(key);
  return modelled;
}

/**
 * The model windows checked, then counted, with no await between (another request of the key could
 * run there): each takes the request only if all admit it, so a refused request takes no slot in
 * any, except in those that count refusals, which count it as they would alone.
 */
function takeModelled(
  models: readonly ModelWindowLimiter[],
  key: string,
  now: number,
): WindowState[] | { by: WindowLimiter; refusal: Refusal } {
  let by: ModelWindowLimiter | undefined;
  let refusal: Refusal | undefined;
  for (const m of models) {
    refusal = m.spentNow(key, now);
    if (refusal) {
      by = m;
      break;
    }
  }
  // The check admitted it at this same instant, so taking it cannot refuse.
  if (!by || !refusal) return models.map((m) => m.takeNow(key, now) as WindowState);
  for (const m of models) {
    if (!m.countsRefused) continue;
    const counted = m.takeNow(key, now);
    // Counted, the refused request moves the refusing window's own retry later.
    if (m === by && isRefusal(counted)) refusal = counted;
  }
  return { by, refusal };
}

/** When several windows are spent, the quota is back only when the last of them admits again. */
export async function latestRefusal(
  limiters: readonly WindowLimiter[],
  key: string,
  by: WindowLimiter,
  refusal: Refusal,
  now: number,
): Promise<{ worst: Refusal; described: WindowLimiter }> {
  let worst = refusal;
  let described = by;
  for (const other of limiters) {
    if (other === by) continue;
    const spent = await other.spent(key, now);
    if (spent && spent.retryAt > worst.retryAt) [worst, described] = [spent, other];
  }
  return { worst, described };
}
