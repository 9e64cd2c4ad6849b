import { parseRetryAfter } from '../../api/retry-after.ts';
import type { AttemptRecord } from '../attempt.ts';
import { AttemptHistory, Holds } from './attempt-history.ts';
import { type Check, DEFAULT_SETTLE_AFTER_MS, type SettledOutcome, SKIP } from './check.ts';

// Module-level factories for getOrAdd: no closure is allocated per call on the hot path.
function newList<T>(): T[] {
  return [];
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => NoInfer<V>): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

interface Predecessor {
  attempt: AttemptRecord;
  /** For a 429 with a valid Retry-After: from when the retry may be sent (client clock). */
  retryFrom?: number;
  /** ... and the earliest moment the server can have meant (its clock read before it answered). */
  quotaBackAfter?: number;
}

/** See retrySucceedsCheck: how long a 429's retry keeps the key's history from being cut. */
const LATE_RETRY_MS = 120_000;

/** A retried attempt, with when its retry may go and when its quota came back, if it was a 429 with a Retry-After. */
function predecessorOf(a: AttemptRecord): Predecessor {
  const p: Predecessor = { attempt: a };
  const retryAfter = a.kind === 'refused' ? parseRetryAfter(a.headers?.['retry-after']) : undefined;
  if (retryAfter?.form === 'seconds') {
    p.retryFrom = a.receivedAt + retryAfter.seconds * 1000;
    p.quotaBackAfter = a.sentAt + (retryAfter.seconds - 1) * 1000;
  } else if (retryAfter?.form === 'date') {
    p.retryFrom = Math.max(a.receivedAt, retryAfter.date.getTime());
    p.quotaBackAfter = a.sentAt;
  }
  return p;
}

/** The retry's failure, when no other request of the key could have taken the quota that came back. */
function refusedAgain(
  history: AttemptHistory,
  p: Predecessor,
  r: AttemptRecord,
  settleAfterMs: number,
): string | undefined {
  const others = history.countBetween(
    r.keyLabel,
    p.quotaBackAfter ?? p.attempt.sentAt,
    r.receivedAt,
    [p.attempt, r],
    1,
    settleAfterMs,
  );
  // Another request may have taken the quota that came back: no verdict.
  if (others !== 0) return undefined;
  const waited = ((r.sentAt - p.attempt.receivedAt) / 1000).toFixed(2);
  return `the retry sent ${waited} s after a 429 (Retry-After ${String(p.attempt.headers?.['retry-after'])}) was refused again, with no other request in between`;
}

export function retrySucceedsCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  history: AttemptHistory = new AttemptHistory(),
): Check {
  /** Attempts followed by a retry, per key, operation and attempt number, oldest first. */
  const predecessors = new Map<string, Predecessor[]>();
  /** The 429 each retry follows, found when the retry is observed. */
  const matched = new WeakMap<AttemptRecord, Predecessor>();
  const pending: { p: Predecessor; r: AttemptRecord }[] = [];
  const slot = (a: AttemptRecord, attempt: number) => `${a.keyLabel}\u0000${a.operation.id}\u0000${attempt}`;
  /** 429s with a Retry-After, until their retry is judged, hold the history back to when the quota came back. */
  const holds = new Holds();
  // A 429 still to come was sent at most the horizon ago; its quota came back at most 1 s before
  // that. A retry later than LATE_RETRY_MS after its quota came back (one never sent, say) holds
  // nothing: judged after all, it finds the history cut and gets no verdict.
  history.askFrom((key, nowMs) =>
    Math.min(nowMs - 2 * settleAfterMs - 1000, holds.floor(key, nowMs - LATE_RETRY_MS)),
  );
  const judged = (p: Predecessor) => holds.release(p.attempt.keyLabel, p.quotaBackAfter as number);
  return {
    id: 'retry-after-retry-succeeds',
    rule: "The retry sent once a 429's Retry-After has elapsed is not refused again when no other request of the key could have been answered since the quota came back",
    source: 'seed: Errors (429: "retries after the time in the Retry-After header"); RFC 9110 section 10.2.3',
    observe: (a) => {
      history.add(a);
      if (a.attempt > 1) {
        const list = predecessors.get(slot(a, a.attempt - 1));
        const i = list ? list.findIndex((p) => p.attempt.receivedAt <= a.sentAt) : -1;
        if (list && i >= 0) {
          const [p] = list.splice(i, 1) as [Predecessor];
          // Two calls of the operation failed at this attempt, one of them not with a 429: which one
          // this retry follows is not known.
          const ambiguous = list.some(
            (q) =>
              q.attempt.receivedAt <= a.sentAt && (q.retryFrom === undefined) !== (p.retryFrom === undefined),
          );
          // A transport error is never evaluated: its 429 has no verdict to wait for.
          if (!ambiguous && p.retryFrom !== undefined && a.status !== 0) matched.set(a, p);
          else if (p.retryFrom !== undefined) judged(p);
          if (list.length === 0) predecessors.delete(slot(a, a.attempt - 1));
        }
      }
      if (!a.retried) return;
      const p = predecessorOf(a);
      if (p.quotaBackAfter !== undefined) holds.hold(a.keyLabel, p.quotaBackAfter);
      getOrAdd(predecessors, slot(a, a.attempt), newList).push(p);
    },
    evaluate: ({ attempt: r }) => {
      const p = matched.get(r);
      if (!p || p.retryFrom === undefined) return SKIP;
      if (r.sentAt < p.retryFrom || r.kind !== 'refused') {
        judged(p);
        return r.sentAt < p.retryFrom ? SKIP : undefined;
      }
      pending.push({ p, r });
      return SKIP;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { p, r } = pending[0] as (typeof pending)[number];
        if (!final && r.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        judged(p);
        const outcome = refusedAgain(history, p, r, settleAfterMs);
        if (outcome !== undefined) settled.push({ attempt: r, outcome });
      }
      return settled;
    },
  };
}
