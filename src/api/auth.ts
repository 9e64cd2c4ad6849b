import type { Oas3Operation, Oas3SecurityRequirement, Oas3SecurityScheme } from '@redocly/openapi-core';
import { InputError } from './input-error.ts';
import type { OpenApiDocument } from './openapi-document.ts';

/**
 * Where an operation's API key goes. The seed's scheme is `Authorization: Bearer <key>`; a document
 * may say otherwise per operation (an `apiKey` scheme in a header or the query string).
 */
export type AuthPlacement = { in: 'header'; name: string; bearer: boolean } | { in: 'query'; name: string };

/** The placement and why: the document's scheme, the `--auth-header` flag, or the seed's default. */
export type ResolvedAuth = AuthPlacement & { from: string };

export const BEARER: AuthPlacement = { in: 'header', name: 'authorization', bearer: true };

/** A header name as RFC 9110 allows it (a token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `--auth-header NAME`: the key in that header, as-is; `Authorization` keeps the Bearer scheme. */
export function parseAuthHeader(name: string, flag = '--auth-header'): AuthPlacement {
  if (!TOKEN.test(name)) throw new InputError(`${flag}: '${name}' is not a header name`);
  const lower = name.toLowerCase();
  return { in: 'header', name: lower, bearer: lower === 'authorization' };
}

/** The placement one scheme asks for, or undefined where one key cannot fill it (basic, cookie, mutual TLS). */
function placementOf(scheme: Oas3SecurityScheme): AuthPlacement | undefined {
  if (scheme.type === 'apiKey') {
    if (scheme.in === 'header') return parseAuthHeaderQuiet(scheme.name);
    if (scheme.in === 'query') return { in: 'query', name: scheme.name };
    return undefined;
  }
  if (scheme.type === 'http') return scheme.scheme.toLowerCase() === 'bearer' ? BEARER : undefined;
  // An OAuth2 or OpenID Connect token goes as a bearer token (RFC 6750): a key given for it is one.
  if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') return BEARER;
  return undefined;
}

function parseAuthHeaderQuiet(name: string): AuthPlacement | undefined {
  try {
    return parseAuthHeader(name);
  } catch {
    return undefined;
  }
}

/**
 * The first alternative of a security requirement that one key fills: a requirement naming a single
 * scheme we can send. An empty alternative (`{}`: auth optional) or none at all leaves the default.
 */
function fromRequirement(
  requirement: Oas3SecurityRequirement[],
  schemes: Record<string, Oas3SecurityScheme>,
): { placement: AuthPlacement; scheme: string } | undefined {
  for (const alternative of requirement) {
    const names = Object.keys(alternative);
    if (names.length !== 1) continue;
    const name = names[0] as string;
    const scheme = schemes[name];
    const placement = scheme && placementOf(scheme);
    if (placement) return { placement, scheme: name };
  }
  return undefined;
}

/** The security schemes a document declares, by name. */
function schemesOf(document: OpenApiDocument): Record<string, Oas3SecurityScheme> {
  return (document.components?.securitySchemes ?? {}) as Record<string, Oas3SecurityScheme>;
}

/**
 * One operation's placement of the key: the scheme its security requirement names (its own, else the
 * document's), else the seed's Bearer. An operation that needs no key (`security: []`) gets the
 * document's default all the same: the key does no harm there, and a server that reads it optionally
 * sees the same client.
 */
export function resolveOperationAuth(operation: Oas3Operation, document: OpenApiDocument): ResolvedAuth {
  const schemes = schemesOf(document);
  const own = operation.security;
  // An operation's own requirement replaces the document's; one no key can fill falls back to it.
  const chosen =
    (own && own.length > 0 ? fromRequirement(own, schemes) : undefined) ??
    fromRequirement(document.security ?? [], schemes);
  return chosen
    ? { ...chosen.placement, from: `security scheme ${chosen.scheme}` }
    : { ...BEARER, from: 'default (Authorization: Bearer)' };
}

/** The operations with `--auth-header`'s placement in place of the document's (unchanged without one). */
export function withAuthOverride<T extends { auth: ResolvedAuth }>(
  operations: T[],
  placement: AuthPlacement | undefined,
): T[] {
  if (!placement) return operations;
  return operations.map((op) => ({ ...op, auth: { ...placement, from: '--auth-header' } }));
}

/** A loaded document with `--auth-header NAME` (if given) placed over every operation's scheme. */
export function withAuthHeaderFlag<T extends { operations: { auth: ResolvedAuth }[] }>(
  spec: T,
  name: string | undefined,
): T {
  if (name === undefined) return spec;
  return { ...spec, operations: withAuthOverride(spec.operations, parseAuthHeader(name)) };
}

/** Whether two placements put the key in the same place the same way (their reasons aside). */
export function samePlacement(a: AuthPlacement, b: AuthPlacement): boolean {
  if (a === b) return true;
  if (a.in !== b.in || a.name !== b.name) return false;
  return a.in === 'query' || (b.in === 'header' && a.bearer === b.bearer);
}

/** How a placement reads in a printed configuration: `header api_key`, `Authorization: Bearer`, `query ?api_key=`. */
export function describeAuth(p: AuthPlacement): string {
  if (p.in === 'query') return `query ?${p.name}=`;
  return p.bearer ? `header ${p.name}: Bearer` : `header ${p.name}`;
}
