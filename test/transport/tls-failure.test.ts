import { describe, expect, it } from 'vitest';
import { describeTlsFailures, tlsFailureWords } from '../../src/transport/tls-failure.ts';

describe('TLS failures in words, each with the flag that addresses it', () => {
  it.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /self-signed: trust it with --ca FILE .* --insecure/],
    ['SELF_SIGNED_CERT_IN_CHAIN', /self-signed/],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /a CA this machine does not trust: give that CA with --ca FILE/],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', /a CA this machine does not trust/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /not for the host in the URL/],
    ['CERT_HAS_EXPIRED', /has expired/],
    ['CERT_NOT_YET_VALID', /not valid yet/],
    ['CLIENT_CERT_REQUIRED', /requires a client certificate: give it with --cert FILE --key FILE/],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', /requires a client certificate/],
    ['CLIENT_CERT_REFUSED', /refused the client certificate given with --cert/],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', /refused the client certificate/],
    ['ERR_SSL_WRONG_VERSION_NUMBER', /does not speak TLS on that port: use http:\/\//],
  ])('%s', (code, words) => {
    expect(tlsFailureWords(code)).toMatch(words);
  });

  it('a code that is not a TLS failure has no such words', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'UND_ERR_HEADERS_TIMEOUT', 'TypeError'])
      expect(tlsFailureWords(code)).toBeUndefined();
  });

  it('among transport errors, the TLS ones are said once per meaning with their codes and counts', () => {
    expect(describeTlsFailures({ ECONNRESET: 2 })).toBeUndefined();
    const said = describeTlsFailures({
      ECONNRESET: 9,
      SELF_SIGNED_CERT_IN_CHAIN: 1,
      DEPTH_ZERO_SELF_SIGNED_CERT: 4,
    });
    expect(said).toMatch(
      /^the target's certificate is self-signed: .*\(DEPTH_ZERO_SELF_SIGNED_CERT 4, SELF_SIGNED_CERT_IN_CHAIN 1\)$/,
    );
    expect(said).not.toMatch(/ECONNRESET/);
  });
});
