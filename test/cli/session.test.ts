import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/api/exit-codes.ts';
import { exitCodeOf, withSession } from '../../src/cli/session.ts';
import type { RunResult } from '../../src/result/types.ts';

/**
 * The lifecycle every command (run, capacity, bench) lives in, without a process of its own: its
 * cleanups, its early stop and its exit code. The signals themselves are the CLI tests' (run-sigint,
 * second-signal): a second one here would exit the test runner.
 */

afterEach(() => vi.restoreAllMocks());

const quietly = { label: 'bench', quiet: true, write: () => ({ path: undefined, failed: false }) };

describe('a session', () => {
  it('undoes what it was given last first, every cleanup even when one throws, then rethrows that', async () => {
    const undone: string[] = [];
    const closing = withSession(quietly, async (session) => {
      session.defer(() => undone.push('plans file'));
      session.defer(() => {
        undone.push('server');
        throw new Error('server would not stop');
      });
      session.defer(async () => {
        undone.push('teardown');
      });
      return EXIT.OK;
    });
    await expect(closing).rejects.toThrow('server would not stop');
    expect(undone).toEqual(['teardown', 'server', 'plans file']);
  });

  it('leaves no signal or exit handler behind', async () => {
    const before = ['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e));
    await withSession(quietly, async () => {
      expect(process.listenerCount('SIGINT')).toBe((before[0] as number) + 1);
      return EXIT.OK;
    });
    expect(['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e))).toEqual(before);
  });

  it('stopped before its work started: one line naming the command and the signal, nothing written', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const write = vi.fn(() => ({ path: undefined, failed: false }));
    const code = await withSession({ ...quietly, write }, async (session) => {
      expect(session.stoppedEarly()).toBe(false);
      session.interrupt.abort('SIGINT');
      return session.stoppedEarly() ? EXIT.INTERRUPTED : EXIT.OK;
    });
    expect(code).toBe(EXIT.INTERRUPTED);
    expect(stderr).toHaveBeenCalledWith(
      'petstore-load: bench interrupted by SIGINT before it started: nothing measured\n',
    );
    expect(write).not.toHaveBeenCalled();
  });

  it("writes through the command's own writer", async () => {
    const result = { meta: {} } as RunResult;
    const write = vi.fn(() => ({ path: '/somewhere/result.json', failed: false }));
    await withSession({ ...quietly, write }, async (session) => {
      expect(session.write(result).path).toBe('/somewhere/result.json');
      return EXIT.OK;
    });
    expect(write).toHaveBeenCalledWith(result);
  });
});

describe('the exit code', () => {
  it('most telling first: the interruption, the failure, a write that failed, else 0', () => {
    const failure = EXIT.THRESHOLDS_FAILED;
    expect(exitCodeOf({ interrupted: true, failure, writeFailed: true })).toBe(EXIT.INTERRUPTED);
    expect(exitCodeOf({ interrupted: false, failure, writeFailed: true })).toBe(failure);
    expect(exitCodeOf({ interrupted: false, writeFailed: true })).toBe(EXIT.WRITE_FAILED);
    expect(exitCodeOf({ interrupted: false, writeFailed: false })).toBe(EXIT.OK);
  });
});
