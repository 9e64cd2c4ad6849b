import { type DeclaredResponse, declaredFor, fieldSpelling } from '../../api/declared-contract.ts';
import { DIALECTS, type Dialect, type RateLimitView } from '../../api/rate-limit-dialect.ts';
import { type Check, type CheckContext, NOT_DECLARED, SKIP } from './check.ts';

/**
 * What `run --contract` may promise: one dialect, `ietf` (any of the IETF drafts), `any` (whatever
 * the server speaks, judged in its own terms) or `document`: per operation and status, what the
 * OpenAPI document declares (src/api/declared-contract.ts), the default with a user's `--spec`. The
 * seed promises X-RateLimit-* with Reset a Unix time.
 */
export const CONTRACTS = [...DIALECTS, 'ietf', 'any', 'document'] as const;
export type Contract = (typeof CONTRACTS)[number];

export const DEFAULT_CONTRACT: Contract = 'seed';

/**
 * What the document declares for a response's status, or NOT_DECLARED when it declares no
 * rate-limit field there (or does not declare the status at all).
 */
export function declaredQuota(
  ctx: Pick<CheckContext, 'op' | 'status'>,
): DeclaredResponse | typeof NOT_DECLARED {
  const declared = declaredFor(ctx.op.declared, ctx.status);
  return declared?.rateLimit === undefined ? NOT_DECLARED : declared;
}

/** The declared fields for a person: `RateLimit for 200`. */
export function declaredLabel(declared: DeclaredResponse): string {
  return `${(declared.rateLimit?.fields ?? []).map(fieldSpelling).join(', ')} for ${declared.status}`;
}

/** A response keeps what its status declares when the dialect read, or one sent beside it, is one the fields can be. */
export function keepsDeclared(declared: DeclaredResponse, view: Pick<RateLimitView, 'dialect' | 'alsoSent'>) {
  const dialects = declared.rateLimit?.dialects ?? [];
  return (
    (view.dialect !== 'none' && dialects.includes(view.dialect)) ||
    view.alsoSent.some((d) => dialects.includes(d))
  );
}

/** The three dialects that share the X-RateLimit-* names and differ only in what Reset counts. */
const LEGACY: readonly (Dialect | 'none')[] = ['seed', 'seconds-until', 'unix-ms'];
const isLegacy = (d: Dialect | 'none' | Contract): d is 'seed' | 'seconds-until' | 'unix-ms' =>
  LEGACY.includes(d as Dialect);

/** `document` keeps nothing here: its promise is per response (`keepsDeclared`). */
export function keeps(contract: Contract, dialect: Dialect | 'none'): boolean {
  if (dialect === 'none' || contract === 'document') return false;
  return contract === 'any' || contract === dialect || (contract === 'ietf' && dialect.startsWith('ietf-'));
}

/** A response keeps the contract when the dialect read, or one sent beside it, is one it promises. */
export function viewKeeps(contract: Contract, view: Pick<RateLimitView, 'dialect' | 'alsoSent'>): boolean {
  return keeps(contract, view.dialect) || view.alsoSent.some((d) => keeps(contract, d));
}

/** Each dialect in a few words: the result's summary and report name it so. */
export const DIALECT_LABELS: Record<Dialect | 'none', string> = {
  seed: 'X-RateLimit-*, Reset a Unix time in seconds',
  'seconds-until': 'X-RateLimit-*, Reset in seconds until the reset',
  'unix-ms': 'X-RateLimit-*, Reset a Unix time in milliseconds',
  'ietf-8': 'RateLimit and RateLimit-Policy, IETF draft 8',
  'ietf-7': 'RateLimit as a dictionary, IETF draft 7',
  'ietf-6': 'RateLimit-Limit, -Remaining and -Reset, IETF draft 6',
  none: 'no rate-limit fields',
};

/** What a contract promises, as the end of "the contract promises ...". */
const PROMISED: Record<Contract, string> = {
  seed: 'X-RateLimit-*',
  'seconds-until': 'X-RateLimit-* with Reset in seconds until the reset',
  'unix-ms': 'X-RateLimit-* with Reset a Unix time in milliseconds',
  'ietf-8': 'RateLimit/RateLimit-Policy (IETF draft 8)',
  'ietf-7': 'RateLimit as a dictionary (IETF draft 7)',
  'ietf-6': 'RateLimit-Limit/-Remaining/-Reset (IETF draft 6)',
  ietf: 'the RateLimit fields of an IETF draft',
  any: 'rate-limit fields in some dialect',
  document: "the fields the document declares for the response's operation and status",
};

/** What an X-RateLimit-Reset counts, in each of the dialects that send one. */
const RESET_UNIT: Record<'seed' | 'seconds-until' | 'unix-ms', string> = {
  seed: 'a Unix time in seconds',
  'seconds-until': 'seconds until the reset',
  'unix-ms': 'a Unix time in milliseconds',
};

const TOLD: Record<Dialect, string> = {
  seed: 'the quota is told in X-RateLimit-*, Reset a Unix time in seconds',
  'seconds-until':
    'the quota is told in X-RateLimit-*, Reset in seconds until the reset (as @fastify/rate-limit sends)',
  'unix-ms': 'the quota is told in X-RateLimit-*, Reset a Unix time in milliseconds',
  'ietf-8': 'the quota is told in RateLimit/RateLimit-Policy (IETF draft 8)',
  'ietf-7': 'the quota is told in RateLimit as a dictionary (IETF draft 7)',
  'ietf-6': 'the quota is told in RateLimit-Limit/-Remaining/-Reset (IETF draft 6)',
};

/** The X-RateLimit-* dialects are told apart by Reset alone: without one, which of them is unknown. */
const unitUnknown = (view: RateLimitView) => isLegacy(view.dialect) && view.resetSeconds === undefined;

/** For a person: what the response told, and what the contract promised instead. */
export function mismatch(view: RateLimitView, contract: Contract): string {
  if (view.dialect === 'none')
    return `no rate-limit fields at all; the contract promises ${PROMISED[contract]}`;
  if (isLegacy(view.dialect) && isLegacy(contract) && !unitUnknown(view))
    return `X-RateLimit-Reset is ${RESET_UNIT[view.dialect]}${view.dialect === 'seconds-until' ? ', as @fastify/rate-limit sends' : ''}; the contract promises ${RESET_UNIT[contract]}`;
  const told = unitUnknown(view)
    ? 'the quota is told in X-RateLimit-* (without a Reset)'
    : TOLD[view.dialect];
  return `${told}; the contract promises ${PROMISED[contract]}`;
}

/** For a person: what the response told, and what the document declares for its status instead. */
export function declaredMismatch(view: RateLimitView, declared: DeclaredResponse): string {
  const dialects = declared.rateLimit?.dialects ?? [];
  if (view.dialect === 'none')
    return `no rate-limit fields at all; the document declares ${declaredLabel(declared)}`;
  const [only] = dialects;
  // The document's example told the unit of its X-RateLimit-Reset, and the server's is another.
  if (
    isLegacy(view.dialect) &&
    dialects.length === 1 &&
    only !== undefined &&
    isLegacy(only) &&
    !unitUnknown(view)
  )
    return `X-RateLimit-Reset is ${RESET_UNIT[view.dialect]}${view.dialect === 'seconds-until' ? ', as @fastify/rate-limit sends' : ''}; the document's example of it for ${declared.status} is ${RESET_UNIT[only]}`;
  const told = unitUnknown(view)
    ? 'the quota is told in X-RateLimit-* (without a Reset)'
    : TOLD[view.dialect];
  return `${told}; the document declares ${declaredLabel(declared)}`;
}

/** `--contract document`: each response against what its operation declares for its status. */
function dialectMatchesDocumentCheck(): Check {
  return {
    id: 'ratelimit-dialect-matches-contract',
    rule: "The quota is told in the dialect of the rate-limit fields the document declares for the response's operation and status (--contract document), or that one is sent beside it; a status that declares none is not judged (counted as not declared); a response without any rate-limit field is left to ratelimit-headers-present",
    source: "the document given (--spec): the headers each operation's responses declare",
    evaluate: (ctx) => {
      const declared = declaredQuota(ctx);
      if (declared === NOT_DECLARED) return NOT_DECLARED;
      const view = ctx.rateLimitView;
      if (view.dialect === 'none') return SKIP;
      if (keepsDeclared(declared, view)) return undefined;
      // X-RateLimit-* without a Reset: which of the three it is cannot be told.
      if (unitUnknown(view) && declared.rateLimit?.dialects.some(isLegacy)) return SKIP;
      return declaredMismatch(view, declared);
    },
  };
}

/**
 * The dialect is this check's alone: the other rate-limit checks judge the figures in whatever
 * dialect came, so that a server speaking another one fails here once rather than everywhere. A
 * response with no rate-limit field at all is ratelimit-headers-present's (one defect, one failure).
 */
export function dialectMatchesContractCheck(contract: Contract = DEFAULT_CONTRACT): Check {
  if (contract === 'document') return dialectMatchesDocumentCheck();
  return {
    id: 'ratelimit-dialect-matches-contract',
    rule: `The quota is told in the dialect the contract promises (--contract ${contract}: ${PROMISED[contract]}), or that one is sent beside it; a response without any rate-limit field is left to ratelimit-headers-present`,
    source:
      contract === 'seed'
        ? 'seed: Limits, rate limit headers (X-RateLimit-*; Reset: "Unix timestamp at which the limit resets")'
        : `the contract given (--contract ${contract}) in place of the seed's X-RateLimit-*`,
    evaluate: ({ rateLimitView: view }) => {
      if (view.dialect === 'none') return SKIP;
      if (viewKeeps(contract, view)) return undefined;
      // X-RateLimit-* without a Reset: which of the three it is cannot be told.
      if (unitUnknown(view) && isLegacy(contract)) return SKIP;
      return mismatch(view, contract);
    },
  };
}
