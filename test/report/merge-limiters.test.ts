import { describe, expect, it } from 'vitest';
import { mergeLimiters } from '../../src/report/merge-records.ts';

describe('mergeLimiters', () => {
  it('keeps the model given, the widest gap and every rate cut', () => {
    expect(
      mergeLimiters([
        { model: 'unknown', given: false, gapMs: 0, rateCuts: 2 },
        undefined,
        { model: 'gcra', given: false, gapMs: 1025, rateCuts: 1 },
      ]),
    ).toEqual({ model: 'gcra', given: false, gapMs: 1025, rateCuts: 3 });
    expect(
      mergeLimiters([
        { model: 'token-bucket', given: true, gapMs: 1025, rateCuts: 0 },
        { model: 'token-bucket', given: true, gapMs: 1030, rateCuts: 0 },
      ]),
    ).toEqual({ model: 'token-bucket', given: true, gapMs: 1030, rateCuts: 0 });
  });

  it('says nothing when no part met a limiter', () => {
    expect(mergeLimiters([undefined, undefined])).toBeUndefined();
  });
});
