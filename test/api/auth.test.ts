import { describe, expect, it } from 'vitest';
import { parseAuthHeader, withAuthOverride } from '../../src/api/auth.ts';
import { InputError } from '../../src/api/input-error.ts';
import { authHeaders, authQuery, withAuthQuery } from '../../src/api/request.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../../src/api/spec.ts';

const FIXTURE = 'test/fixtures/petstore3-apikey.yaml';

describe('auth: where the key goes, read from the document', () => {
  it('the Petstore 3 api_key scheme: a header named api_key, the key as-is', async () => {
    const spec = await loadSpec(FIXTURE);
    const byId = new Map(spec.operations.map((op) => [op.id, op.auth]));
    expect(byId.get('getInventory')).toEqual({
      in: 'header',
      name: 'api_key',
      bearer: false,
      from: 'security scheme api_key',
    });
    expect(byId.get('findPetsByStatus')).toEqual({
      in: 'query',
      name: 'api_key',
      from: 'security scheme api_key_query',
    });
    // No requirement, none in the document: the seed's Bearer.
    expect(byId.get('getOrderById')).toMatchObject({ in: 'header', name: 'authorization', bearer: true });
  });

  it('our own document (bearerAuth): Authorization: Bearer on every operation', async () => {
    const spec = await loadSpec(DEFAULT_SPEC_PATH);
    expect(spec.operations.length).toBeGreaterThan(0);
    for (const op of spec.operations)
      expect(authHeaders(op.auth, 'k')).toEqual({ authorization: 'Bearer k' });
  });

  it('--auth-header overrides every operation, Authorization keeping Bearer', async () => {
    const spec = await loadSpec(FIXTURE);
    const over = withAuthOverride(spec.operations, parseAuthHeader('X-Key'));
    for (const op of over) {
      expect(op.auth).toEqual({ in: 'header', name: 'x-key', bearer: false, from: '--auth-header' });
      expect(authHeaders(op.auth, 'k')).toEqual({ 'x-key': 'k' });
    }
    expect(parseAuthHeader('Authorization')).toEqual({ in: 'header', name: 'authorization', bearer: true });
    expect(() => parseAuthHeader('bad name')).toThrow(InputError);
    expect(withAuthOverride(spec.operations, undefined)).toBe(spec.operations);
  });

  it('a query placement adds ?name=key (encoded) and no header', () => {
    const q = { in: 'query', name: 'api_key' } as const;
    expect(authHeaders(q, 'k')).toEqual({});
    expect(authQuery(q, 'a b&c')).toBe('api_key=a%20b%26c');
    expect(withAuthQuery('/p', q, 'k')).toBe('/p?api_key=k');
    expect(withAuthQuery('/p?x=1', q, 'k')).toBe('/p?x=1&api_key=k');
    expect(withAuthQuery('/p', parseAuthHeader('api_key'), 'k')).toBe('/p');
  });
});
