import { request } from 'undici';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the text ('' for none). */
  body: unknown;
  text: string;
}

export interface Call {
  method?: string;
  key?: string | null;
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** A request as a server answering in process takes it (test/helpers/simulated.ts). */
export interface InProcessRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

/** Servers answering in process, by the base URL they were given: `call` sends them no socket. */
export const IN_PROCESS = new Map<
  string,
  (request: InProcessRequest) => Promise<{ status: number; headers: Reply['headers']; text: string }>
>();

/** One request to a test server. `key: null` sends no Authorization header; default is the free demo key. */
export async function call(baseUrl: string, path: string, options: Call = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? 'free-demo-key' : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const method = options.method ?? 'GET';
  const inProcess = IN_PROCESS.get(baseUrl);
  const {
    status,
    headers: answered,
    text,
  } = inProcess
    ? await inProcess({ method, path, headers, body })
    : await overSocket(`${baseUrl}${path}`, method, headers, body);
  const type = String(answered['content-type'] ?? '');
  return { status, headers: answered, text, body: type.includes('json') && text ? JSON.parse(text) : text };
}

async function overSocket(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
): Promise<{ status: number; headers: Reply['headers']; text: string }> {
  const response = await request(url, { method: method as 'GET', headers, body });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
