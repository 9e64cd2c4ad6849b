import type { IncomingHttpHeaders } from 'node:http';

/**
 * A response body whose JSON is parsed on first use, then kept. Most responses are looked at only
 * through their headers: the schema check is sampled, error bodies are few, and many flows never
 * read what they get back. Parsing every body up front was a large share of the client's own CPU per
 * request in bench:generator.
 */
export class ResponseBody {
  private parsed = false;
  private value: unknown;
  readonly text: string;
  private readonly headers: IncomingHttpHeaders | undefined;

  constructor(text: string, headers: IncomingHttpHeaders | undefined) {
    this.text = text;
    this.headers = headers;
  }

  /** The body as JSON when the response declares JSON and it parses; otherwise undefined. */
  get json(): unknown {
    if (!this.parsed) {
      this.parsed = true;
      if (this.text !== '' && String(this.headers?.['content-type'] ?? '').includes('json')) {
        try {
          this.value = JSON.parse(this.text);
        } catch {
          this.value = undefined;
        }
      }
    }
    return this.value;
  }
}
