import type { Dispatcher } from 'undici';
import { type NetworkOptions, tlsOptions } from './network.ts';
import { Client, kHTTPContext, Pool, proxyAgent } from './undici.ts';

/** Set on a request's dispatch options: the connection that takes the request writes itself here. */
export const kVia = Symbol('connection');

/** What a request's dispatch options may carry for the protocol to be told afterwards. */
export interface ProtocolNote {
  via: unknown;
}

/**
 * A connection that tells each request it carries (through `kVia` on the request's options, which
 * undici hands down unchanged, or copied with its symbols through a proxy): only with `--http2`,
 * where a response's protocol is not known in advance.
 */
class NotingClient extends Client {
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const note = (options as { [kVia]?: ProtocolNote })[kVia];
    if (note) note.via = this;
    return super.dispatch(options, handler);
  }
}

const notingClient = (origin: URL | string, options: object) => new NotingClient(origin, options);

/** The protocol a response came over, from the connection that carried it. */
export function protocolOf(via: unknown): Protocol {
  const context = (via as Record<symbol, { version?: string } | undefined> | undefined)?.[kHTTPContext];
  return context?.version === 'h2' ? 'HTTP/2' : 'HTTP/1.1';
}

export type Protocol = 'HTTP/1.1' | 'HTTP/2';

export interface PoolShape {
  connections: number;
  keepAliveTimeout: number;
}

/**
 * The dispatcher of a run's (or a probe's) requests to `origin`: undici's Pool with the run's TLS
 * options and HTTP/2 offer, or undici's ProxyAgent tunnelling to it through the proxy. Every request
 * must carry its path; the proxy's agent is given the origin here, so callers need not.
 */
export function newDispatcher(origin: string, shape: PoolShape, network?: NetworkOptions): Dispatcher {
  const tls = tlsOptions(network);
  const http2 = network?.http2 === true;
  const clients = http2 ? { factory: notingClient, allowH2: true } : {};
  if (!network?.proxy) return new Pool(origin, { ...shape, ...clients, ...(tls ? { connect: tls } : {}) });
  const ProxyAgent = proxyAgent();
  const agent = new ProxyAgent({
    uri: network.proxy,
    ...shape,
    ...(http2 ? { allowH2: true } : {}),
    // TLS to the target travels inside the tunnel; an https proxy is trusted as the target is.
    requestTls: { ...tls, ...(http2 ? { allowH2: true } : {}) },
    ...(tls?.ca ? { proxyTls: { ca: tls.ca } } : {}),
    factory: (o: string | URL, options: object) => new Pool(o, { ...options, ...clients }),
  } as ConstructorParameters<typeof ProxyAgent>[0]);
  return agent.compose(
    (dispatch) => (options, handler) => dispatch({ ...options, origin } as typeof options, handler),
  );
}
