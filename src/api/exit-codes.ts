/** Exit codes, documented in --help and the README; CI pipelines branch on them. */
export const EXIT = {
  OK: 0,
  /** Reserved for failed thresholds and regressions. */
  THRESHOLDS_FAILED: 1,
  /** Bad flags, files or scenarios. */
  USAGE: 2,
  /**
   * The target could not be reached, or the shared quota store was gone and never came back, or a
   * fleet did not gather or ended without one of its generators.
   */
  UNREACHABLE: 3,
  /** `serve` could not listen (address in use, no permission). */
  LISTEN_FAILED: 4,
  /**
   * `run`: the workload completed no iteration (every flow was held past the run's end, by a pause
   * or the server's told budget, or none finished in time), or whose iterations sent no request: its
   * figures measure nothing of a flow.
   */
  NO_ITERATIONS: 5,
  /** A bug of ours (sysexits' EX_SOFTWARE), never a verdict on the target. */
  INTERNAL: 70,
  /** An output (result, report, JUnit, a summary) could not be written where asked (sysexits' EX_CANTCREAT). */
  WRITE_FAILED: 73,
  INTERRUPTED: 130,
} as const;
