import type {
  Oas3MediaType,
  Oas3Operation,
  Oas3Parameter,
  Oas3RequestBody,
  Oas3Response,
  OasRef,
} from '@redocly/openapi-core';
import { type ResolvedAuth, resolveOperationAuth } from './auth.ts';
import { type DeclaredContract, declaredContract } from './declared-contract.ts';
import type { OpenApiDocument } from './openapi-document.ts';
import type { SchemaDialect } from './schema-formats.ts';

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE' | 'QUERY';
export type Stability = 'stable' | 'beta' | 'experimental';

/**
 * The methods a Path Item names as fields: HTTP's, and 3.2's `query` (a safe request with a body).
 * 3.2's `additionalOperations` (SUBSCRIBE, LINK, COPY, ...) are left out of the table: a method
 * outside this set has no meaning our client, checks or reports know (the Train Travel API's
 * SUBSCRIBE opens a stream that stays open, which no latency or rate figure describes), and a
 * scenario calls operations by these methods only. They are skipped, not refused: the document
 * loads, its other operations run.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query'] as const;

export interface OperationParameter {
  name: string;
  /** `querystring` (3.2): the whole query string as one value. */
  in: 'path' | 'query' | 'querystring' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema | undefined;
  /** The parameter's own `example`, else the value of the first of its `examples` that has one. */
  example?: unknown;
}

export interface OperationResponse {
  /** "200", "4XX" or "default", as the document writes it. */
  status: string;
  schema: JsonSchema | undefined;
  /** Declared header names, lower case. */
  headers: string[];
}

/**
 * One row of the operation table: everything the server and the load side need to know about an
 * operation, read from the document so that no other module hard-codes a path or a method.
 */
export interface Operation {
  id: string;
  method: HttpMethod;
  /** Path template as written in the document, e.g. `/pets/{petId}`. */
  path: string;
  tag: string | undefined;
  summary: string | undefined;
  deprecated: boolean;
  /** `x-sunset`: when a deprecated operation stops working. */
  sunset: Date | undefined;
  /** `x-deprecation`: when it was deprecated (sent as the RFC 9745 `Deprecation` header). */
  deprecation: Date | undefined;
  /** `x-stability`; absent means stable. */
  stability: Stability;
  /** `x-inferred: true`: not stated by the source the document was written from. */
  inferred: boolean;
  /** False when the operation declares `security: []`. */
  requiresAuth: boolean;
  /** Where the key goes: the operation's security scheme, else the seed's Bearer. */
  auth: ResolvedAuth;
  parameters: OperationParameter[];
  requestBody: { required: boolean; contentType: string; schema: JsonSchema | undefined } | undefined;
  responses: OperationResponse[];
  /** The language its schemas are written in: OpenAPI 3.0's, or JSON Schema 2020-12 from 3.1 on. */
  schemaDialect: SchemaDialect;
  /** What each declared response promises of its rate-limit headers and Retry-After. */
  declared: DeclaredContract;
  /** The Accept header its requests send: the media types its responses declare (`acceptFor`). */
  accept: string;
}

type Extended<T> = T & Record<`x-${string}`, unknown>;

function asDate(value: unknown, where: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value instanceof Date ? value.getTime() : String(value));
  if (Number.isNaN(date.getTime())) throw new Error(`${where}: '${String(value)}' is not a date`);
  return date;
}

function asStability(value: unknown, where: string): Stability {
  if (value === undefined || value === 'stable') return 'stable';
  if (value === 'beta' || value === 'experimental') return value;
  throw new Error(`${where}: x-stability must be beta or experimental, got '${String(value)}'`);
}

function assertDereferenced<T>(value: T | OasRef, where: string): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    throw new Error(`${where}: unresolved $ref ${value.$ref}; load the document with loadSpec()`);
  }
  return value as T;
}

const JSON_MEDIA = /^application\/(.+\+)?json\b/i;

/**
 * An operation's Accept header: every media type its responses declare, in the document's order,
 * JSON ones first. Where JSON is declared the others go at q=0.5, so that a server offering both
 * answers in the JSON the client reads, while a response declared only in another type is still
 * acceptable (no 406). A document that declares no content gets `application/json`, as before.
 */
export function acceptFor(responses: Record<string, unknown> | undefined): string {
  const types = new Map<string, string>();
  for (const response of Object.values(responses ?? {})) {
    const content = (response as { content?: Record<string, unknown> } | undefined)?.content;
    for (const type of Object.keys(content ?? {})) {
      const key = type.toLowerCase();
      if (!types.has(key)) types.set(key, type);
    }
  }
  const all = [...types.values()];
  const json = all.filter((t) => JSON_MEDIA.test(t));
  if (all.length === 0) return 'application/json';
  if (json.length === 0) return all.join(', ');
  const others = all.filter((t) => !JSON_MEDIA.test(t)).map((t) => `${t};q=0.5`);
  return [...json, ...others].join(', ');
}

function jsonContent(content: Record<string, Oas3MediaType> | undefined) {
  if (!content) return undefined;
  const type = Object.keys(content).find((t) => JSON_MEDIA.test(t)) ?? Object.keys(content)[0];
  return type === undefined
    ? undefined
    : { contentType: type, schema: content[type]?.schema as JsonSchema | undefined };
}

function readParameters(list: unknown[] | undefined, where: string): OperationParameter[] {
  return (list ?? []).map((p) => {
    const param = assertDereferenced<Oas3Parameter>(p as Oas3Parameter, where);
    const example = param.example ?? firstExampleValue(param.examples);
    return {
      name: param.name,
      in: param.in as OperationParameter['in'],
      required: param.in === 'path' ? true : Boolean(param.required),
      schema: param.schema as JsonSchema | undefined,
      ...(example === undefined ? {} : { example }),
    };
  });
}

/** An Example Object's `value` (an `externalValue` is a URL, not a value), the first map entry's that has one. */
function firstExampleValue(examples: Oas3Parameter['examples']): unknown {
  for (const entry of Object.values(examples ?? {}))
    if (entry && typeof entry === 'object' && 'value' in entry && entry.value !== undefined)
      return entry.value;
  return undefined;
}

/**
 * Builds the operation table of a dereferenced OpenAPI 3.x document (see `loadSpec`): the operations
 * under `paths`. A 3.1 document may have none (webhooks only); webhooks are requests the API sends,
 * not ones a load test makes, and are not in the table.
 */
export function buildOperationTable(document: OpenApiDocument): Operation[] {
  const table: Operation[] = [];
  const globalSecurity = document.security ?? [];
  const schemaDialect = schemaDialectOf(document);
  for (const [path, ref] of Object.entries(document.paths ?? {})) {
    if (!ref) continue;
    const item = assertDereferenced(ref, path);
    for (const method of METHODS) {
      const op = item[method] as Extended<Oas3Operation> | undefined;
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      // Operation parameters override path-level ones with the same name and location.
      const own = readParameters(op.parameters, where);
      const inherited = readParameters(item.parameters, where).filter(
        (p) => !own.some((o) => o.name === p.name && o.in === p.in),
      );
      const body = op.requestBody ? assertDereferenced<Oas3RequestBody>(op.requestBody, where) : undefined;
      const bodyContent = jsonContent(body?.content);
      table.push({
        id: op.operationId ?? where,
        method: method.toUpperCase() as HttpMethod,
        path,
        tag: op.tags?.[0],
        summary: op.summary,
        deprecated: Boolean(op.deprecated),
        sunset: asDate(op['x-sunset'], where),
        deprecation: asDate(op['x-deprecation'], where),
        stability: asStability(op['x-stability'], where),
        inferred: op['x-inferred'] === true,
        requiresAuth: (op.security ?? globalSecurity).length > 0,
        auth: resolveOperationAuth(op, document),
        parameters: [...inherited, ...own],
        requestBody: body && bodyContent ? { required: Boolean(body.required), ...bodyContent } : undefined,
        responses: Object.entries(op.responses ?? {}).map(([status, r]) => {
          const response = assertDereferenced<Oas3Response>(r, `${where} ${status}`);
          return {
            status,
            schema: jsonContent(response.content)?.schema,
            headers: Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()),
          };
        }),
        schemaDialect,
        declared: declaredContract(op.responses),
        accept: acceptFor(op.responses),
      });
    }
  }
  const seen = new Set<string>();
  for (const op of table) {
    if (seen.has(op.id)) throw new Error(`operationId '${op.id}' is used twice`);
    seen.add(op.id);
  }
  return table;
}

/**
 * 3.0 wrote its own subset of JSON Schema (`nullable`, boolean `exclusiveMinimum`); 3.1 and 3.2 write
 * JSON Schema 2020-12 (type arrays, `const`, `examples`). A 3.1 document's `jsonSchemaDialect` may
 * name another, which is read as 2020-12 all the same.
 */
function schemaDialectOf(document: OpenApiDocument): SchemaDialect {
  return document.openapi.startsWith('3.0.') ? 'openapi-3.0' : 'json-schema-2020-12';
}

/** The response an operation declares for a status: exact code, then `4XX`-style ranges, then `default`. */
export function findResponse(op: Operation, status: number): OperationResponse | undefined {
  const code = String(status);
  return (
    op.responses.find((r) => r.status === code) ??
    op.responses.find((r) => r.status.toUpperCase() === `${code[0]}XX`) ??
    op.responses.find((r) => r.status === 'default')
  );
}
