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
  const response = await request(`${baseUrl}${path}`, {
    method: (options.method ?? 'GET') as 'GET',
    headers,
    body,
  });
  const text = await response.body.text();
  const type = String(response.headers['content-type'] ?? '');
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    body: type.includes('json') && text ? JSON.parse(text) : text,
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
