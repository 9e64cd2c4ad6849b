import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { kVia, type Protocol, protocolOf } from '../transport/dispatcher.ts';
import type { NetworkOptions } from '../transport/network.ts';
import { now } from './clock.ts';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Absent (a test's fake transport): HTTP/1.1. */
  protocol?: Protocol;
}

/**
 * Told when send `seq` is written to its connection. A request leaves later than it was let go when
 * its connection is being opened or the process is still compiling the path it takes (a run's first
 * requests, 30 ms on a busy machine): a limiter that counts gaps sees the time it arrived.
 */
export interface Departures {
  departed(seq: number, at: number): void;
}

/**
 * nginx answers a client certificate it requires and did not get, or refused, with a 400 page (its
 * own 496 and 495 underneath), not with a TLS alert: told apart here, they are the TLS failures they
 * are (a transport error with its words), not answers of the API.
 */
const CLIENT_CERT_PAGES: [RegExp, string][] = [
  [/No required SSL certificate was sent/, 'CLIENT_CERT_REQUIRED'],
  [/The SSL certificate error/, 'CLIENT_CERT_REFUSED'],
];

/**
 * An HTTP/2 server closes a connection with GOAWAY (nginx after 1000 requests on it, its
 * keepalive_requests), and undici fails a request in flight on it as a socket error: named for what
 * it is, so that the summary does not read it as the target resetting connections.
 */
function goAwayNamed(error: Error): Error {
  if ((error as NodeJS.ErrnoException).code !== 'UND_ERR_SOCKET' || !/"GOAWAY" frame/.test(error.message))
    return error;
  return Object.assign(new Error(error.message), { code: 'H2_GOAWAY' });
}

function clientCertFailure(text: string): Error | undefined {
  for (const [page, code] of CLIENT_CERT_PAGES)
    if (page.test(text))
      return Object.assign(new Error(`the target refused the client certificate (${code})`), { code });
  return undefined;
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
  /** The connection that carried the request (set by it, with --http2), for the response's protocol. */
  via: unknown = undefined;
  /** Read when the response starts, while its connection still says what it negotiated. */
  private protocol: Protocol = 'HTTP/1.1';
  private readonly resolve: (response: RawResponse) => void;
  private readonly reject: (error: Error) => void;

  private readonly departures: Departures | undefined;
  private readonly seq: number;

  constructor(
    resolve: (response: RawResponse) => void,
    reject: (error: Error) => void,
    departures: Departures | undefined,
    seq: number,
  ) {
    this.resolve = resolve;
    this.reject = reject;
    this.departures = departures;
    this.seq = seq;
  }

  /** undici calls it as the request is about to be written to its connection (writeH1, writeH2). */
  onRequestStart(): void {
    this.departures?.departed(this.seq, now());
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.status = status;
    this.headers = headers;
    if (this.via !== undefined) this.protocol = protocolOf(this.via);
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
    const refused = this.status === 400 ? clientCertFailure(text) : undefined;
    if (refused) this.reject(refused);
    else this.resolve({ status: this.status, headers: this.headers, text, protocol: this.protocol });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.reject(goAwayNamed(error));
  }
}

export function send(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  departures?: Departures,
  seq = 0,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new Collector(resolve, reject, departures, seq));
  });
}

/**
 * `send` where a response's protocol is not known in advance (`--http2`): the request's options
 * carry its collector, for the connection that takes it to write itself in. Without HTTP/2 every
 * response is HTTP/1.1, and the request path does without it.
 */
export function sendNoting(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  departures?: Departures,
  seq = 0,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const collector = new Collector(resolve, reject, departures, seq);
    (options as { [kVia]?: Collector })[kVia] = collector;
    dispatcher.dispatch(options, collector);
  });
}

/** How a client with these network options sends: noting the connection only with HTTP/2. */
export function senderFor(network: NetworkOptions | undefined): typeof send {
  return network?.http2 ? sendNoting : send;
}
