import { describe, expect, it } from 'vitest';
import { Recorder } from '../../src/record/recorder.ts';
import { FREE_WINDOWS, makeAttempt, operation, T0 } from '../helpers/unit-attempt.ts';

describe('a recorder that counts only the workload', () => {
  it('keeps setup and teardown out of the timeline and the rates, and starts second 0 with the workload', async () => {
    const listPets = await operation('listPets');
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
    const at = (ms: number) => makeAttempt(listPets, { sentAt: T0 + ms - 5, receivedAt: T0 + ms, json: [] });
    recorder.record(at(100)); // setup
    recorder.measure(true, T0 + 2000);
    recorder.record(at(2100));
    recorder.record(at(3500));
    recorder.measure(false);
    recorder.record(at(9000)); // teardown
    expect(recorder.timeline.snapshot().map((p) => [p.t, p.requests])).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(recorder.overall.duringWorkload).toBe(2);
    expect(recorder.admittedDuringWorkload).toBe(2);
    // Everything is still in the totals and histograms.
    expect(recorder.overall.requests).toBe(4);
  });
});
