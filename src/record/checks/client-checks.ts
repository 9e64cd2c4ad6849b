import { DEFAULTS } from '../../api/defaults.ts';
import { readRateLimit } from '../../api/rate-limit-dialect.ts';
import { keepsAway } from '../../api/responses.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../api/retry-after.ts';
import type { AttemptRecord } from '../attempt.ts';
import { ViolationCounter } from '../violations.ts';
import type { AttemptCheck, AttemptCheckCounts, CheckSample } from './check.ts';
import { keepEarliest } from './tally.ts';

/*
 * Checks of OUR client's behaviour, judged from the attempts it recorded (send and receive times,
 * status, headers, the waits it took, whether it retried). The client is built to pass them; they
 * are here so that a regression in it shows in every result, and their failing cases are proven by
 * unit tests over crafted attempt sequences.
 */

const SOURCE_BACKOFF =
  'seed: Limits ("Clients implement exponential backoff"); the README (backoff, retry budget)';

class Counts implements AttemptCheckCounts {
  passes = 0;
  failures = 0;
  samples: CheckSample[] = [];

  pass(): void {
    this.passes++;
  }

  fail(a: AttemptRecord, detail: string): void {
    this.failures++;
    keepEarliest(this.samples, { operation: a.operation.id, status: a.status, detail, at: a.receivedAt });
  }
}

/** Retried as after a 5xx (src/api/responses.ts): a server error, a bare 503, no answer at all. */
const isServerError = (a: AttemptRecord) =>
  a.kind === 'server-error' || a.kind === 'unexplained' || a.kind === 'transport-error';

export function waitedRetryAfterCheck(): AttemptCheck {
  const counts = new Counts();
  const violations = new ViolationCounter();
  /** Per key: when the first 429 was received; the rule applies to requests sent after it. */
  const first429 = new Map<string, number>();
  return {
    id: 'client-waited-retry-after',
    rule: "After a refusal (a 429, the limiter's refusal in another status, or a bare 503), no request of that key is sent before its Retry-After has elapsed",
    source:
      'seed: Errors (429) and Limits (a temporary ban for requests after a 429); RFC 9110 section 10.2.3',
    observe: (a) => {
      const since = first429.get(a.keyLabel);
      const before = violations.count;
      violations.observe(a);
      if (violations.count > before) {
        const pause = violations.samples[violations.samples.length - 1];
        const until = pause && violations.count <= 5 ? pause.pauseUntil : undefined;
        counts.fail(
          a,
          until === undefined
            ? 'sent inside a Retry-After pause'
            : `sent ${Math.round(until - a.sentAt)} ms before the Retry-After pause ended`,
        );
      } else if (since !== undefined && a.sentAt >= since) {
        counts.pass();
      }
      if (keepsAway(a.kind) && since === undefined && parseRetryAfter(a.headers?.['retry-after']))
        first429.set(a.keyLabel, a.receivedAt);
    },
    counts: () => counts,
  };
}

export interface BackoffPolicy {
  /** Full-jitter backoff of 5xx and transport-error retries: the client's defaults. */
  baseMs: number;
  capMs: number;
}

export const CLIENT_BACKOFF: BackoffPolicy = { baseMs: DEFAULTS.backoffBaseMs, capMs: DEFAULTS.backoffCapMs };

/** A wait may exceed its ceiling by this much: timers fire late on a loaded machine. */
const TIMER_SLACK_MS = 1000;
/** "No jitter": at least this many waits before one attempt number, all in the top tenth of their ceiling. */
const NO_JITTER_SAMPLES = 10;

type Pause = { from: number; until: number };
type Ratios = Map<number, { values: number[]; example: AttemptRecord }>;

const slotOf = (a: AttemptRecord, attempt: number) => `${a.keyLabel}\u0000${a.operation.id}\u0000${attempt}`;

/** `list` of `key` with `value` appended, the oldest dropped beyond `max`. */
function pushBounded<K, V>(map: Map<K, V[]>, key: K, value: V, max: number): void {
  const list = map.get(key) ?? [];
  list.push(value);
  if (list.length > max) list.shift();
  map.set(key, list);
}

/**
 * The failed attempt retry `a` follows (taken off `failed`), when its wait is the backoff's: the
 * predecessor was a 5xx or transport error, no other call of the operation that failed at that
 * attempt differently could be the one followed, and no 429 pause of the key held the retry back.
 */
function backoffPredecessor(
  a: AttemptRecord,
  failed: Map<string, AttemptRecord[]>,
  pauses: Map<string, Pause[]>,
): AttemptRecord | undefined {
  const list = failed.get(slotOf(a, a.attempt - 1));
  const i = list ? list.findIndex((p) => p.receivedAt <= a.sentAt) : -1;
  const p = i >= 0 ? (list?.splice(i, 1)[0] as AttemptRecord) : undefined;
  const ambiguous =
    list?.some(
      (q) => q.receivedAt <= a.sentAt && isServerError(q) !== (p !== undefined && isServerError(p)),
    ) ?? false;
  const held = (pauses.get(a.keyLabel) ?? []).some(
    (w) => w.until > (p?.receivedAt ?? 0) && w.from < a.sentAt,
  );
  return p && isServerError(p) && !ambiguous && !held ? p : undefined;
}

/**
 * Until when a 429 holds the key's requests back: Retry-After, else the quota's Reset in whatever
 * dialect, else the client's own 429 backoff (at most a minute), as the client waits. Only 429s
 * read it, so a record without the view (a test's) costs a parse here and nothing on the way of
 * other responses.
 */
function pauseUntil(a: AttemptRecord): number {
  const retryAfter = parseRetryAfter(a.headers?.['retry-after']);
  if (retryAfter) return a.receivedAt + retryAfterDelayMs(retryAfter, a.receivedAt);
  const delay = (a.rateLimitView ?? (a.headers && readRateLimit(a.headers, a.receivedAt)))?.resetSeconds;
  return delay !== undefined && delay > 0 ? a.receivedAt + delay * 1000 : a.receivedAt + 60_000;
}

/** The counts so far, with a failure for each attempt number whose waits all sat at their ceiling. */
function withJitterVerdicts(counts: Counts, ratios: Ratios): AttemptCheckCounts {
  const result = { passes: counts.passes, failures: counts.failures, samples: [...counts.samples] };
  for (const [attempt, { values, example }] of ratios) {
    if (values.length < NO_JITTER_SAMPLES || values.some((v) => v < 0.9)) continue;
    result.failures++;
    keepEarliest(result.samples, {
      operation: example.operation.id,
      status: example.status,
      detail: `no jitter: all ${values.length} waits before attempt ${attempt + 1} were at 90% or more of their ceiling`,
      at: example.receivedAt,
    });
  }
  return result;
}

export function backoffCheck(policy: BackoffPolicy = CLIENT_BACKOFF): AttemptCheck {
  const counts = new Counts();
  /** Attempts followed by a retry, per key, operation and attempt number. */
  const failed = new Map<string, AttemptRecord[]>();
  /** Per key: 429 pauses, which also hold retries back (the wait then is not the backoff's). */
  const pauses = new Map<string, Pause[]>();
  /** Per attempt number retried: wait / ceiling of each judged wait, and one retry to name. */
  const ratios: Ratios = new Map();
  const ceiling = (attempt: number) => Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const judge = (a: AttemptRecord, p: AttemptRecord): void => {
    const limit = ceiling(p.attempt);
    const ratio = ratios.get(p.attempt) ?? { values: [], example: a };
    ratio.values.push(a.backoffWaitMs / limit);
    ratios.set(p.attempt, ratio);
    if (a.backoffWaitMs > limit + TIMER_SLACK_MS)
      counts.fail(
        a,
        `waited ${Math.round(a.backoffWaitMs)} ms before attempt ${a.attempt}, above its ceiling of ${limit} ms`,
      );
    else counts.pass();
  };

  return {
    id: 'client-backoff-jitter-cap',
    rule: `A retry after a 5xx or transport error waits no longer than the full-jitter ceiling min(cap ${policy.capMs} ms, ${policy.baseMs} ms x 2^(n-1)) for attempt n (+${TIMER_SLACK_MS} ms of timer slack), and the waits are jittered (not all of ${NO_JITTER_SAMPLES} or more at their ceiling)`,
    source: SOURCE_BACKOFF,
    observe: (a) => {
      const p = a.attempt > 1 ? backoffPredecessor(a, failed, pauses) : undefined;
      if (p) judge(a, p);
      if (a.retried) pushBounded(failed, slotOf(a, a.attempt), a, 256);
      if (keepsAway(a.kind))
        pushBounded(pauses, a.keyLabel, { from: a.receivedAt, until: pauseUntil(a) + 100 }, 64);
    },
    counts: () => withJitterVerdicts(counts, ratios),
  };
}

export interface RetryBudgetPolicy {
  /** Share of calls that may be retried after a 5xx or transport error (the client's default 10%). */
  ratio: number;
  /** Retries allowed whatever the number of calls. */
  minimum: number;
}

export const CLIENT_RETRY_BUDGET: RetryBudgetPolicy = { ratio: 0.1, minimum: 10 };

export function retryBudgetCheck(policy: RetryBudgetPolicy = CLIENT_RETRY_BUDGET): AttemptCheck {
  let calls = 0;
  const retries: AttemptRecord[] = [];
  return {
    id: 'client-retry-budget',
    rule: `Retries after a 5xx or transport error are at most ${policy.ratio * 100}% of the calls (at least ${policy.minimum} allowed), over the run (calls cut off by an interrupt before their first attempt are not seen)`,
    source: SOURCE_BACKOFF,
    observe: (a) => {
      if (a.attempt === 1) calls++;
      if (a.retried && isServerError(a)) retries.push(a);
    },
    counts: () => {
      // The client allows a retry while retries < max(minimum, ratio x calls).
      const allowed = Math.ceil(Math.max(policy.minimum, policy.ratio * calls));
      const over = retries.slice(allowed);
      const counts = new Counts();
      counts.passes = retries.length - over.length;
      over.forEach((a, i) => {
        counts.fail(a, `retry ${allowed + i + 1} of at most ${allowed} for ${calls} calls`);
      });
      return counts;
    },
  };
}

/** The checks of the client's behaviour, fresh for one run, in report order. */
export function clientChecks(): AttemptCheck[] {
  return [waitedRetryAfterCheck(), backoffCheck(), retryBudgetCheck()];
}
