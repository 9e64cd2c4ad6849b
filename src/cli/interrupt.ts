import { EXIT } from '../api/exit-codes.ts';

/**
 * Ctrl-C and SIGTERM end a command's traffic early, not the process: what was measured is still
 * written, marked partial (exit 130). A second signal exits at once, after writing what `onForce`
 * can write synchronously. One per command; `release` in its `finally`.
 */
export class Interrupt {
  private readonly controller = new AbortController();
  /** The signal's name, or why the command stopped itself (a threshold that aborts). */
  by: string | undefined;
  private signalled = false;
  private force: (() => void) | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    if (!this.signalled) {
      this.signalled = true;
      this.abort(signal);
      return;
    }
    try {
      this.force?.();
    } catch {
      // Exiting at once was asked for: a result that cannot be written now is not waited for.
    }
    process.exit(EXIT.INTERRUPTED);
  };

  constructor() {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  abort(by: string): void {
    this.by ??= by;
    this.controller.abort();
  }

  /** What a second signal writes (synchronously) before the process exits. */
  onForce(write: () => void): void {
    this.force = write;
  }

  release(): void {
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
  }
}
