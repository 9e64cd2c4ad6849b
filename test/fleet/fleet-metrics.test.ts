import { describe, expect, it } from 'vitest';
import { metricsIdentity } from '../../src/cli/run-execute.ts';
import type { RunConfig } from '../../src/config/run.ts';

type Identity = Parameters<typeof metricsIdentity>[0];
const config = (o: Partial<Pick<RunConfig, 'fleet' | 'shard'>> = {}): Identity =>
  ({
    scenario: { name: 'catalogue-browse' },
    planName: 'pro',
    fleet: undefined,
    shard: undefined,
    ...o,
  }) as Identity;

describe("a fleet generator's live metrics", () => {
  it('carry the fleet and the shard beside the run, and never a credential of the target', () => {
    const fleet = { name: 'nightly', generators: 3 } as RunConfig['fleet'];
    expect(
      metricsIdentity(config({ fleet, shard: { index: 2, count: 3 } }), new URL('http://u:pw@api.test/v1')),
    ).toEqual({
      scenario: 'catalogue-browse',
      target: 'http://api.test/v1',
      plan: 'pro',
      fleet: 'nightly',
      shard: '2',
    });
  });

  it('carry neither without a fleet', () => {
    expect(
      Object.keys(metricsIdentity(config({ shard: { index: 2, count: 3 } }), new URL('http://api.test'))),
    ).toEqual(['scenario', 'target', 'plan']);
  });
});
