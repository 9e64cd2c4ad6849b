/**
 * What a TLS failure means and which flag addresses it, by the code Node's TLS (OpenSSL) or our
 * transport gives it: every such failure is said in words, never as the code alone.
 */
const FAILURES: { codes: RegExp; words: string }[] = [
  {
    codes: /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/,
    words:
      "the target's certificate is self-signed: trust it with --ca FILE (its PEM), or skip verification with --insecure",
  },
  {
    codes: /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/,
    words:
      "the target's certificate is signed by a CA this machine does not trust: give that CA with --ca FILE, or skip verification with --insecure",
  },
  {
    codes: /^(ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH)$/,
    words:
      "the target's certificate is not for the host in the URL: use a host name it names, or skip verification with --insecure",
  },
  {
    codes: /^CERT_HAS_EXPIRED$/,
    words: "the target's certificate has expired: renew it, or skip verification with --insecure",
  },
  {
    codes: /^CERT_NOT_YET_VALID$/,
    words:
      "the target's certificate is not valid yet (check this machine's clock), or skip verification with --insecure",
  },
  {
    codes: /^(CLIENT_CERT_REQUIRED|ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)$/,
    words: 'the target requires a client certificate: give it with --cert FILE --key FILE',
  },
  {
    codes: /^ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE$/,
    words:
      'the target ended the TLS handshake: it may require a client certificate (--cert FILE --key FILE), or share no TLS version or cipher with Node',
  },
  {
    codes:
      /^(CLIENT_CERT_REFUSED|ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE|ERR_SSL_TLSV1_ALERT_UNKNOWN_CA|ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN|ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR|ERR_SSL_TLSV1_ALERT_ACCESS_DENIED)$/,
    words:
      'the target refused the client certificate given with --cert: check that its CA is one the target trusts',
  },
  {
    codes: /^(ERR_SSL_WRONG_VERSION_NUMBER|EPROTO)$/,
    words: 'the target does not speak TLS on that port: use http:// for it',
  },
];

/** The words for a TLS failure's code, or undefined for a code that is not a TLS failure. */
export function tlsFailureWords(code: string): string | undefined {
  return FAILURES.find((f) => f.codes.test(code))?.words;
}

/**
 * The TLS failure among transport errors, said once in words with its codes and counts (the most
 * frequent first), e.g. "the target's certificate is self-signed: ... (DEPTH_ZERO_SELF_SIGNED_CERT 4)";
 * undefined when none of them is a TLS failure.
 */
export function describeTlsFailures(transportErrors: Record<string, number>): string | undefined {
  const byWords = new Map<string, [string, number][]>();
  for (const [code, count] of Object.entries(transportErrors).sort(([, a], [, b]) => b - a)) {
    const words = count ? tlsFailureWords(code) : undefined;
    if (words) byWords.set(words, [...(byWords.get(words) ?? []), [code, count]]);
  }
  if (byWords.size === 0) return undefined;
  return [...byWords]
    .map(([words, codes]) => `${words} (${codes.map(([code, n]) => `${code} ${n}`).join(', ')})`)
    .join('; ');
}
