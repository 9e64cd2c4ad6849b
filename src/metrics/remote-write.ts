import protobuf from 'protobufjs';
import { compress } from 'snappyjs';
import { type Dispatcher, request } from 'undici';
import { classifyResponse } from '../api/responses.ts';
import type { Family, MetricType } from './families.ts';
import type { Series } from './series.ts';

/**
 * Prometheus remote write 1.0: a WriteRequest (prompb, the subset we send) in protobuf, compressed
 * with snappy's block format, POSTed. The types are built by protobufjs' reflection from this text.
 */
const PROMPB = `
syntax = "proto3";
package prometheus;
message WriteRequest {
  repeated TimeSeries timeseries = 1;
  repeated MetricMetadata metadata = 3;
}
message TimeSeries {
  repeated Label labels = 1;
  repeated Sample samples = 2;
}
message Label {
  string name = 1;
  string value = 2;
}
message Sample {
  double value = 1;
  int64 timestamp = 2;
}
message MetricMetadata {
  enum MetricType {
    UNKNOWN = 0;
    COUNTER = 1;
    GAUGE = 2;
    HISTOGRAM = 3;
  }
  MetricType type = 1;
  string metric_family_name = 2;
  string help = 4;
  string unit = 5;
}
`;

export const WriteRequest = protobuf
  .parse(PROMPB, { keepCase: true })
  .root.lookupType('prometheus.WriteRequest');

/** A collection's series, encoded once: a WriteRequest of its own, and how many samples it holds. */
export interface Batch {
  bytes: Uint8Array;
  samples: number;
}

/** Prometheus wants labels sorted by name; `__name__` sorts first among the names we use. */
function sortedLabels(
  name: string,
  identity: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string>>,
) {
  const merged: Record<string, string> = { ...identity, ...own };
  const labels = [{ name: '__name__', value: name }];
  for (const key of Object.keys(merged).sort()) {
    const value = merged[key] as string;
    // An empty value is no label in Prometheus: sending one would only be refused by some receivers.
    if (value !== '') labels.push({ name: key, value });
  }
  return labels;
}

/** Series at one timestamp (epoch ms) as a WriteRequest; a series' own labels win over the identity's. */
export function encodeBatch(
  series: readonly Series[],
  identity: Readonly<Record<string, string>>,
  timestampMs: number,
): Batch {
  const timeseries = series.map((s) => ({
    labels: sortedLabels(s.name, identity, s.labels),
    samples: [{ value: s.value, timestamp: timestampMs }],
  }));
  return { bytes: WriteRequest.encode({ timeseries }).finish(), samples: series.length };
}

const TYPE: Record<MetricType, number> = { counter: 1, gauge: 2, histogram: 3 };

/** The families' types and help, as a WriteRequest of metadata alone (receivers that keep it show it). */
export function encodeMetadata(families: readonly Family[]): Uint8Array {
  const metadata = families.map((f) => ({ type: TYPE[f.type], metric_family_name: f.name, help: f.help }));
  return WriteRequest.encode({ metadata }).finish();
}

/**
 * One request body from several encoded WriteRequests: protobuf appends the repeated fields of
 * concatenated messages, so their concatenation is one WriteRequest holding all their series, in order.
 */
export function writeRequestBody(parts: readonly Uint8Array[]): Buffer {
  return compress(Buffer.concat(parts));
}

export interface RemoteWriteEndpoint {
  /** Without credentials. */
  url: URL;
  /** `Basic ...` from the URL's userinfo, if it had any: sent, never shown. */
  authorization?: string;
}

export type PostOutcome = { ok: true } | { ok: false; retry: boolean; reason: string };

/**
 * POSTs one body. Never throws: a refused connection, a timeout and a 5xx or 429 are worth a retry;
 * any other 4xx says the samples themselves are refused, and sending them again would not help.
 */
export async function postWriteRequest(
  endpoint: RemoteWriteEndpoint,
  body: Buffer,
  o: { dispatcher: Dispatcher; timeoutMs: number; signal?: AbortSignal },
): Promise<PostOutcome> {
  try {
    const response = await request(endpoint.url, {
      method: 'POST',
      dispatcher: o.dispatcher,
      headers: {
        'content-encoding': 'snappy',
        'content-type': 'application/x-protobuf',
        'x-prometheus-remote-write-version': '0.1.0',
        'user-agent': 'petstore-load',
        ...(endpoint.authorization ? { authorization: endpoint.authorization } : {}),
      },
      body,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const text = await response.body.text();
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true };
    const said = text.trim().split('\n')[0]?.slice(0, 200);
    return {
      ok: false,
      // Prometheus's remote-write spec: a 5xx or 429 is tried again; src/api/responses.ts says which.
      retry: classifyResponse({ status: response.statusCode, headers: response.headers }) !== 'admitted',
      reason: `HTTP ${response.statusCode}${said ? `: ${said}` : ''}`,
    };
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return { ok: false, retry: true, reason: e.code ?? e.name ?? 'error' };
  }
}
