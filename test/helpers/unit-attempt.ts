import type { IncomingHttpHeaders } from 'node:http';
import type { Operation } from '../../src/api/operations.ts';
import type { RateWindow } from '../../src/api/plans.ts';
import { readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { classifyResponse } from '../../src/api/responses.ts';
import { loadSpec } from '../../src/api/spec.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { type CheckContext, checkContext } from '../../src/record/checks/check.ts';

let table: Promise<Map<string, Operation>> | undefined;

/** The operation table of our document, by id (loaded once per test file). */
export async function operations(): Promise<Map<string, Operation>> {
  table ??= loadSpec().then((spec) => new Map(spec.operations.map((op) => [op.id, op])));
  return table;
}

export async function operation(id: string): Promise<Operation> {
  const op = (await operations()).get(id);
  if (!op) throw new Error(`no operation '${id}' in the document`);
  return op;
}

/** The free plan's windows, unscaled. */
export const FREE_WINDOWS: RateWindow[] = [
  { name: 'minute', limit: 60, seconds: 60 },
  { name: 'day', limit: 1000, seconds: 86_400 },
];

/** A fixed, whole-second epoch time (2027-01-01T00:00:00Z) to build attempts around. */
export const T0 = Date.UTC(2027, 0, 1);

/** Headers of a well-formed response received at `at` (epoch ms): rate-limit headers and JSON. */
export function okHeaders(at: number, extra: IncomingHttpHeaders = {}): IncomingHttpHeaders {
  return {
    'content-type': 'application/json; charset=utf-8',
    'x-ratelimit-limit': '60',
    'x-ratelimit-remaining': '59',
    'x-ratelimit-reset': String(Math.ceil(at / 1000) + 30),
    ...extra,
  };
}

/**
 * One attempt as the client would record it: by default a 200 received 10 ms after it was sent at
 * T0, with well-formed headers and the JSON body `json` (its text is the serialisation, unless
 * `text` says otherwise).
 */
export function makeAttempt(
  op: Operation,
  over: Partial<Omit<AttemptRecord, 'body'>> & { json?: unknown; text?: string } = {},
): AttemptRecord {
  const { json, text, ...fields } = over;
  const sentAt = over.sentAt ?? T0;
  const receivedAt = over.receivedAt ?? sentAt + 10;
  // No `rateLimit` unless given: the recorder then reads the headers itself. (Cast, so that the
  // helper does not depend on whether the record carries that field.)
  const record = {
    operation: op,
    attempt: 1,
    keyLabel: 'free',
    scheduledAt: undefined,
    status: 200,
    errorCode: undefined,
    headers: okHeaders(receivedAt),
    pacingWaitMs: 0,
    backoffWaitMs: 0,
    retried: false,
    ...fields,
    sentAt,
    receivedAt,
    body: { text: text ?? (json === undefined ? '' : JSON.stringify(json)), json },
  };
  // What the client's classifier would have made of it, unless the test says.
  const kind =
    over.kind ??
    classifyResponse({
      status: record.status,
      headers: record.headers,
      view: record.headers ? readRateLimit(record.headers, receivedAt) : undefined,
      body: { json },
    });
  return { ...record, kind } as AttemptRecord;
}

/** The context the recorder builds for a response. */
export function makeContext(attempt: AttemptRecord, windows: RateWindow[] = FREE_WINDOWS): CheckContext {
  return checkContext(attempt, attempt.headers ?? {}, windows);
}

/** An Error object body as the seed defines it. */
export const errorBody = (status: number, code = 'some_error') => ({
  code,
  message: `failed: ${code}`,
  status,
});
