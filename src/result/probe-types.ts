/**
 * The compliance battery's verdicts (`scenarios/compliance.ts`): one deterministic probe each, like
 * a conformance suite's test case. A failed probe fails the run as a failed threshold does.
 */
export interface ProbeResult {
  /** Stable id, e.g. `auth-missing-key`. */
  id: string;
  /** What the probe sends, in one line. */
  description: string;
  /** What a conforming service answers, in a few words: `401 Error`. */
  expected: string;
  /** What it answered, in the same terms: `401 Error (unauthorized)`, `200 without an Error body`. */
  actual: string;
  passed: boolean;
  /** Why it failed, or what else was seen (absent when there is nothing to add). */
  detail?: string;
  /** Where the rule comes from (the seed's section, an RFC). */
  source?: string;
  /** Requests the probe sent. */
  requests: number;
  /** Wall time of the probe, ms (waits included). */
  durationMs: number;
}
