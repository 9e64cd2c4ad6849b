import { describe, expect, it } from 'vitest';
import { failsForGood } from '../../src/cli/thresholds.ts';
import { evaluateThreshold } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

const OPS = new Set(['listPets', 'getPetById']);

describe('abortOnFail: what may end a run mid-way', () => {
  it('ends it on an upper bound exceeded, not on a count still below its lower bound', async () => {
    // The run so far: 20 listPets, one of them a 500, no getPetById yet.
    const soFar = await syntheticResult([...ladder('listPets', 19), { op: 'listPets', ms: 1, status: 500 }]);
    const judge = (text: string) => {
      const t = parseThreshold(text, 'cli', OPS, { abortOnFail: true });
      return failsForGood(t, evaluateThreshold(t, soFar), soFar);
    };
    expect(judge('errors<1%')).toBe(true);
    expect(judge('p99<5ms')).toBe(true);
    expect(judge('requests<10')).toBe(true);
    expect(judge('requests==10')).toBe(true);
    // Counts grow: still under a lower bound (or an exact one) now says nothing about the end.
    expect(judge('requests>=1000')).toBe(false);
    expect(judge('requests==1000')).toBe(false);
    // Not called yet, or holding.
    expect(judge('getPetById:p99<1ms')).toBe(false);
    expect(judge('getPetById:rps>=5')).toBe(false);
    expect(judge('errors<10%')).toBe(false);
  });
});
