import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher, Pool } from 'undici';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Collects one response for `Pool.dispatch`. undici's `request()` wraps every body in a Readable
 * stream; a load generator reads every body whole, and the dispatcher's handler API skips that
 * layer, which bench:generator shows in CPU per request.
 */
class Collector implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private readonly resolve: (response: RawResponse) => void;
  private readonly reject: (error: Error) => void;

  constructor(resolve: (response: RawResponse) => void, reject: (error: Error) => void) {
    this.resolve = resolve;
    this.reject = reject;
  }

  onRequestStart(): void {}

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.status = status;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const chunks = this.chunks;
    const text =
      chunks.length === 0
        ? ''
        : chunks.length === 1
          ? (chunks[0] as Buffer).toString()
          : Buffer.concat(chunks).toString();
    this.resolve({ status: this.status, headers: this.headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.reject(error);
  }
}

export function send(pool: Pool, options: Dispatcher.DispatchOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    pool.dispatch(options, new Collector(resolve, reject));
  });
}
