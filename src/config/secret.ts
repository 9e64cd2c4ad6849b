/**
 * A key held by a resolved configuration. Printed or serialised it reads as where it came from
 * (`from PETSTORE_API_KEY`), never as itself: `--print-config` and any log of a configuration stay
 * safe to paste into an issue.
 */
export class Secret {
  readonly #value: string;
  /** Where the key came from: `--api-key`, `PETSTORE_API_KEY`, `the embedded server's demo key`. */
  readonly from: string;

  constructor(value: string, from: string) {
    this.from = from;
    this.#value = value;
  }

  /** The key itself, for the one place that sends it. */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return `from ${this.from}`;
  }

  toString(): string {
    return `from ${this.from}`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Secret(from ${this.from})`;
  }
}
