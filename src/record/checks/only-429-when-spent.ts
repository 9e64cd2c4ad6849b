import type { Dialect } from '../../api/rate-limit-dialect.ts';
import type { AttemptRecord } from '../attempt.ts';
import { AttemptHistory, Holds } from './attempt-history.ts';
import { type Check, DEFAULT_SETTLE_AFTER_MS, type SettledOutcome, SKIP } from './check.ts';
import { openUntilMs, remainingField, resetLabel } from './quota.ts';
import { type Witness, witnessStore } from './witnesses.ts';

/** The first witness whose quota could not have been spent by the requests answered in between, as a failure. */
function spentVerdict(
  history: AttemptHistory,
  b: AttemptRecord,
  limit: number,
  witnesses: Witness[],
  dialect: Dialect | 'none',
  settleAfterMs: number,
): string | undefined {
  for (const w of witnesses) {
    const between = history.countBetween(
      b.keyLabel,
      w.sentAt,
      b.receivedAt,
      [w, b],
      w.remaining,
      settleAfterMs,
    );
    if (between !== undefined && between < w.remaining)
      return `429 while the quota remained: ${w.remaining} left ${Math.round(b.sentAt - w.receivedAt)} ms before this request was sent (Limit ${limit}, ${resetLabel(w.reset, { dialect })}), and at most ${between} other requests answered in between`;
  }
  return undefined;
}

export function only429WhenSpentCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  history: AttemptHistory = new AttemptHistory(),
): Check {
  const witnesses = witnessStore(settleAfterMs);
  /** 429s waiting for their verdict hold the history back to their witnesses. */
  const holds = new Holds();
  history.askFrom((key, nowMs) => {
    // A response still in flight may become a witness: it was sent at most the horizon ago.
    const floor = Math.min(nowMs - 2 * settleAfterMs, holds.floor(key));
    return Math.min(floor, witnesses.earliestSent(key));
  });
  const pending: {
    b: AttemptRecord;
    limit: number;
    witnesses: Witness[];
    dialect: Dialect | 'none';
    /** The earliest witness's send: held in the history until the verdict. */
    from: number;
  }[] = [];
  return {
    id: 'ratelimit-429-only-when-spent',
    rule: "A refusal (a 429, or the limiter's refusal in another status) comes only when the quota it names is spent: its Remaining is 0, and no earlier response in the same window showed more remaining than the requests that could have been answered in between (this run's requests: a key shared with other clients at the same time is not seen)",
    source: 'seed: Limits ("When the limit is exceeded, the response is 429") and Errors (429)',
    observe: (a) => history.add(a),
    evaluate: ({ quota, rateLimitView: view, attempt: b, status }) => {
      const { limit, remaining, reset, slack } = quota;
      if (limit === undefined || remaining === undefined) return SKIP;
      if (b.kind !== 'refused') {
        const openUntil = reset === undefined ? 0 : openUntilMs(reset, slack);
        if (remaining > 0 && reset !== undefined && b.receivedAt < openUntil)
          witnesses.keep(b, limit, { remaining, reset, slack });
        return SKIP;
      }
      if (remaining > 0) return `${status} with ${remainingField(view)} ${remaining}`;
      if (reset === undefined) return SKIP;
      const picked = witnesses
        .of(b.keyLabel, limit)
        .filter(
          (w) =>
            w.receivedAt <= b.sentAt &&
            b.receivedAt < w.openUntil &&
            Math.abs(w.reset - reset) <= 1 + w.slack + slack,
        )
        .slice(-4)
        .reverse();
      // Judged once every request that could have been answered in between has been answered.
      if (picked.length > 0) {
        const from = Math.min(...picked.map((w) => w.sentAt));
        pending.push({ b, limit, witnesses: picked, dialect: view.dialect, from });
        holds.hold(b.keyLabel, from);
      }
      return picked.length > 0 ? SKIP : undefined;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { b, limit, witnesses, dialect, from } = pending[0] as (typeof pending)[number];
        if (!final && b.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        holds.release(b.keyLabel, from);
        settled.push({
          attempt: b,
          outcome: spentVerdict(history, b, limit, witnesses, dialect, settleAfterMs),
        });
      }
      return settled;
    },
  };
}
