/**
 * Ctrl-C and SIGTERM end a command's traffic early, not the process: what was measured is still
 * written, marked partial (exit 130). One per command; `release` in its `finally`.
 */
export class Interrupt {
  private readonly controller = new AbortController();
  /** The signal's name, or why the command stopped itself (a threshold that aborts). */
  by: string | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => this.abort(signal);

  constructor() {
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  abort(by: string): void {
    this.by = by;
    this.controller.abort();
  }

  release(): void {
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
  }
}
