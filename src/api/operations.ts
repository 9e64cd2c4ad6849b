import type { OpenAPIV3 } from 'openapi-types';
import { type ResolvedAuth, resolveOperationAuth } from './auth.ts';

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';
export type Stability = 'stable' | 'beta' | 'experimental';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
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

function assertDereferenced<T>(value: T | OpenAPIV3.ReferenceObject, where: string): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    throw new Error(`${where}: unresolved $ref ${value.$ref}; load the document with loadSpec()`);
  }
  return value as T;
}

function jsonContent(content: Record<string, OpenAPIV3.MediaTypeObject> | undefined) {
  if (!content) return undefined;
  const type =
    Object.keys(content).find((t) => /^application\/(.+\+)?json\b/i.test(t)) ?? Object.keys(content)[0];
  return type === undefined
    ? undefined
    : { contentType: type, schema: content[type]?.schema as JsonSchema | undefined };
}

function readParameters(list: unknown[] | undefined, where: string): OperationParameter[] {
  return (list ?? []).map((p) => {
    const param = assertDereferenced<OpenAPIV3.ParameterObject>(p as OpenAPIV3.ParameterObject, where);
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
function firstExampleValue(examples: OpenAPIV3.ParameterObject['examples']): unknown {
  for (const entry of Object.values(examples ?? {}))
    if (entry && typeof entry === 'object' && 'value' in entry && entry.value !== undefined)
      return entry.value;
  return undefined;
}

/** Builds the operation table of a dereferenced OpenAPI 3.x document (see `loadSpec`). */
export function buildOperationTable(document: OpenAPIV3.Document): Operation[] {
  const table: Operation[] = [];
  const globalSecurity = document.security ?? [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    for (const method of METHODS) {
      const op = item[method] as Extended<OpenAPIV3.OperationObject> | undefined;
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      // Operation parameters override path-level ones with the same name and location.
      const own = readParameters(op.parameters, where);
      const inherited = readParameters(item.parameters, where).filter(
        (p) => !own.some((o) => o.name === p.name && o.in === p.in),
      );
      const body = op.requestBody
        ? assertDereferenced<OpenAPIV3.RequestBodyObject>(op.requestBody, where)
        : undefined;
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
          const response = assertDereferenced<OpenAPIV3.ResponseObject>(r, `${where} ${status}`);
          return {
            status,
            schema: jsonContent(response.content)?.schema,
            headers: Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()),
          };
        }),
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

/** The response an operation declares for a status: exact code, then `4XX`-style ranges, then `default`. */
export function findResponse(op: Operation, status: number): OperationResponse | undefined {
  const code = String(status);
  return (
    op.responses.find((r) => r.status === code) ??
    op.responses.find((r) => r.status.toUpperCase() === `${code[0]}XX`) ??
    op.responses.find((r) => r.status === 'default')
  );
}
