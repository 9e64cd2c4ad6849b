import { describe, expect, it } from 'vitest';
import { answeredCount, describeTransportErrors, errorCount } from '../../src/record/errors.ts';

describe('errors of the target', () => {
  it('counts 5xx and transport errors, not 4xx or 429', () => {
    const counts = {
      statuses: { '200': 5, '404': 2, '429': 3, '500': 1, '503': 2 },
      transportErrors: { ECONNRESET: 1, UND_ERR_HEADERS_TIMEOUT: 4 },
    };
    expect(errorCount(counts)).toBe(8);
    expect(answeredCount(counts)).toBe(13);
    expect(answeredCount({ statuses: {}, transportErrors: { ECONNREFUSED: 3 } })).toBe(0);
  });

  it("counts a limiter's refusal in a 503 as an error too: an errors threshold never passes a 503", () => {
    const counts = {
      statuses: { '200': 5, '429': 3, '500': 1, '503': 4 },
      transportErrors: {},
      refusals: { '429': 3, '503': 3 },
    };
    expect(errorCount(counts)).toBe(5);
  });

  it('names transport errors by kind, then by code, most frequent first', () => {
    expect(
      describeTransportErrors({
        ECONNRESET: 1,
        UND_ERR_BODY_TIMEOUT: 2,
        UND_ERR_HEADERS_TIMEOUT: 10,
        ECONNREFUSED: 3,
        UND_ERR_SOCKET: 4,
        EHOSTUNREACH: 1,
      }),
    ).toBe(
      '12 timeouts (UND_ERR_HEADERS_TIMEOUT 10, UND_ERR_BODY_TIMEOUT 2), 5 resets (UND_ERR_SOCKET 4, ECONNRESET 1), 3 refused (ECONNREFUSED 3), 1 other (EHOSTUNREACH 1)',
    );
    expect(describeTransportErrors({ UND_ERR_HEADERS_TIMEOUT: 1 })).toBe(
      '1 timeout (UND_ERR_HEADERS_TIMEOUT 1)',
    );
    expect(describeTransportErrors({})).toBeUndefined();
  });
});
