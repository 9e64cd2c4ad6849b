/**
 * An error in what the user gave us (a flag, a file, a scenario, a plan table).
 * The CLI prints its message as one line and exits with `exitCode`, never with a stack trace,
 * so every message must name the input and say what is wrong with it.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly exitCode;

  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}
