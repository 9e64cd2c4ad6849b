import type { IncomingHttpHeaders } from 'node:http';
import type { Operation } from '../api/operations.ts';
import type { RateLimitView } from '../api/rate-limit-dialect.ts';
import type { ResponseKind } from '../api/responses.ts';
import type { TenantRef } from '../api/tenants.ts';
import type { Protocol } from '../transport/dispatcher.ts';

/**
 * One HTTP attempt, as the client hands it to the recorder. Every attempt is recorded, retries
 * included, so that nothing a retry hides (a 429, a 500, a reset) is lost from the figures.
 * Times are epoch ms with sub-ms resolution.
 */
export interface AttemptRecord {
  operation: Operation;
  /** 1 for the first attempt of a call. */
  attempt: number;
  /** Label of the key (its plan, or a tenant's `pro#3`), never the key itself. */
  keyLabel: string;
  /** A tenant mix's tenant the key belongs to (one shared object per key); undefined outside a mix. */
  tenant?: TenantRef | undefined;
  /** Open model: when the iteration was scheduled to start; response time is measured from here. */
  scheduledAt: number | undefined;
  sentAt: number;
  receivedAt: number;
  /** 0 for a transport error. */
  status: number;
  /** What the answer meant (src/api/responses.ts): every figure and check reads this, never the status. */
  kind: ResponseKind;
  /** Transport error code (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, ...). */
  errorCode: string | undefined;
  /** The protocol a response came over (absent: HTTP/1.1, or a transport error). */
  protocol?: Protocol | undefined;
  headers: IncomingHttpHeaders | undefined;
  /**
   * The quota fields in whatever dialect the server spoke, as the client read them for pacing; the
   * checks take it as it is (read once, used twice), and read the headers only for a record without it.
   */
  rateLimitView?: RateLimitView;
  body: AttemptBody;
  pacingWaitMs: number;
  /**
   * Of `pacingWaitMs`, the time the key was held by the server's told budget (its Remaining spent,
   * until its Reset); absent where nothing paces by it (capacity's probes, a benchmark's feed).
   */
  budgetWaitMs?: number;
  backoffWaitMs: number;
  /**
   * A 429's pause of the key as the client kept it (epoch ms): Retry-After's, a reset's, or, when
   * the server told no wait, the client's own backoff.
   */
  pauseUntil?: number | undefined;
  /** This attempt is followed by a retry. */
  retried: boolean;
}

/** A response body: its text, and its JSON, which the client parses only when something reads it. */
export interface AttemptBody {
  /** Raw body text ('' for none). */
  readonly text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  readonly json: unknown;
}

export interface AttemptSink {
  record(attempt: AttemptRecord): void;
}
