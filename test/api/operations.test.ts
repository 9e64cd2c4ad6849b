import { describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/api/openapi-document.ts';
import { buildOperationTable, findResponse } from '../../src/api/operations.ts';

const errorSchema = { type: 'object', required: ['code'] };
const doc = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  security: [{ key: [] }],
  paths: {
    '/things/{id}': {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
        { name: 'trace', in: 'header', schema: { type: 'string' } },
      ],
      get: {
        operationId: 'getThing',
        tags: ['Things'],
        'x-stability': 'beta',
        parameters: [{ name: 'trace', in: 'header', required: true, schema: { type: 'integer' } }],
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
          '4XX': { description: 'err', content: { 'application/problem+json': { schema: errorSchema } } },
          default: { description: 'other' },
        },
      },
      delete: {
        security: [],
        responses: { '204': { description: 'gone', headers: { 'X-Thing': { schema: {} } } } },
      },
    },
  },
} as unknown as OpenApiDocument;

describe('buildOperationTable', () => {
  it('reads any OpenAPI 3 document: ids, parameters, stability, security, responses', () => {
    const [get, del] = buildOperationTable(doc);
    expect(get).toMatchObject({
      id: 'getThing',
      method: 'GET',
      path: '/things/{id}',
      tag: 'Things',
      stability: 'beta',
    });
    // The operation's own `trace` header parameter overrides the path-level one.
    expect(get?.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
      { name: 'trace', in: 'header', required: true, schema: { type: 'integer' } },
    ]);
    expect(get?.requiresAuth).toBe(true);
    // An operation without operationId is named by method and path; `security: []` means public.
    expect(del).toMatchObject({
      id: 'DELETE /things/{id}',
      requiresAuth: false,
      stability: 'stable',
      deprecated: false,
    });
    expect(del?.responses[0]?.headers).toEqual(['x-thing']);
  });

  it('finds the declared response by exact code, then range, then default', () => {
    const [get] = buildOperationTable(doc);
    if (!get) throw new Error('no operation');
    expect(findResponse(get, 200)?.status).toBe('200');
    expect(findResponse(get, 404)?.schema).toEqual(errorSchema);
    expect(findResponse(get, 503)?.status).toBe('default');
  });

  it('refuses unresolved references, a bad x-stability and duplicate ids', () => {
    const withRef = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, { responses: object }>>;
    };
    (withRef.paths['/things/{id}'] as Record<string, { responses: object }>).get!.responses = {
      '200': { $ref: '#/x' },
    };
    expect(() => buildOperationTable(withRef as unknown as OpenApiDocument)).toThrow(/unresolved \$ref/);
    const badStability = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    badStability.paths['/things/{id}']!.get!['x-stability'] = 'alpha';
    expect(() => buildOperationTable(badStability as unknown as OpenApiDocument)).toThrow(/x-stability/);
    const dup = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    dup.paths['/things/{id}']!.delete!.operationId = 'getThing';
    expect(() => buildOperationTable(dup as unknown as OpenApiDocument)).toThrow(/used twice/);
  });
});
