import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BUILT_IN_SPEC_JSON, DEFAULT_SPEC_PATH, dereferenceLocal, loadSpec } from '../../src/api/spec.ts';

/** Our document under another name: read as a user's `--spec` is, by the parser, validated in full. */
function asUserDocument(): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'spec-')), 'petstore.openapi.yaml');
  copyFileSync(DEFAULT_SPEC_PATH, copy);
  return copy;
}

const EXPECTED_OPERATIONS = [
  'listPets',
  'createPet',
  'getPetById',
  'updatePet',
  'deletePet',
  'listCategories',
  'createCategory',
  'getCategory',
  'listOrders',
  'placeOrder',
  'getOrder',
  'deleteOrder',
  'listInventory',
  'getInventoryItem',
  'updateInventory',
];

describe('the pet store OpenAPI document', () => {
  it("is a valid OpenAPI 3.0.3 document by the rules a user's --spec is held to", async () => {
    // A user's document is checked against the specification's rules; any error throws.
    const { document } = await loadSpec(asUserDocument());
    expect(document.openapi).toBe('3.0.3');
    expect(document.info?.version).toBe('1.0.0');
  });

  it('is read at each start from its JSON copy, which says what the YAML says (else: npm run spec:json)', async () => {
    const json = JSON.parse(readFileSync(BUILT_IN_SPEC_JSON, 'utf8'));
    expect(json, 'src/api/petstore.openapi.json is stale: run npm run spec:json').toEqual(
      parse(readFileSync(DEFAULT_SPEC_PATH, 'utf8')),
    );
    // Dereferenced as the parser dereferences a user's document: every $ref replaced by the object it names.
    const ours = (await loadSpec()).document;
    expect(ours).toEqual((await loadSpec(asUserDocument())).document);
    expect(JSON.stringify(ours)).not.toContain('$ref');
  });

  it('follows a chain of references, keeps one object per component, and names one that leads nowhere', () => {
    const doc = {
      components: { schemas: { A: { $ref: '#/components/schemas/B' }, B: { type: 'string' } } },
      paths: { x: { $ref: '#/components/schemas/A' }, y: { $ref: '#/components/schemas/B' } },
    };
    const out = dereferenceLocal(doc) as typeof doc & { paths: Record<string, unknown> };
    expect(out.paths.x).toEqual({ type: 'string' });
    expect(out.paths.x).toBe(out.paths.y);
    expect(() => dereferenceLocal({ a: { $ref: '#/nowhere' } })).toThrow('unresolved $ref #/nowhere');
  });

  it('has the seed schemas with their required fields', async () => {
    const api = parse(readFileSync(DEFAULT_SPEC_PATH, 'utf8')) as {
      components: {
        schemas: Record<string, { required?: string[]; enum?: string[] }>;
        securitySchemes: object;
      };
      tags: { name: string }[];
    };
    const s = api.components.schemas;
    for (const name of [
      'PetStatus',
      'NewPet',
      'Pet',
      'Pets',
      'NewCategory',
      'Category',
      'Order',
      'InventoryItem',
      'InventoryUpdate',
      'Error',
    ]) {
      expect(s[name], name).toBeDefined();
    }
    expect(s.PetStatus?.enum).toEqual(['available', 'pending', 'sold']);
    expect(s.NewPet?.required).toEqual(['name', 'categoryId']);
    expect(s.Order?.required).toBeUndefined();
    expect(s.InventoryItem?.required?.sort()).toEqual(['petId', 'quantity', 'status']);
    expect(s.Error?.required?.sort()).toEqual(['code', 'message', 'status']);
    expect(api.tags.map((t) => t.name).sort()).toEqual(['Pets', 'Store']);
    expect(api.components.securitySchemes).toHaveProperty('bearerAuth');
  });

  it('turns into an operation table with every operation the issue names', async () => {
    const { operations } = await loadSpec();
    const ids = operations.map((o) => o.id);
    for (const id of EXPECTED_OPERATIONS) expect(ids).toContain(id);
    const byId = Object.fromEntries(operations.map((o) => [o.id, o]));
    expect(byId.getPetById).toMatchObject({
      method: 'GET',
      path: '/pets/{petId}',
      deprecated: true,
      inferred: false,
    });
    expect(byId.getPetById?.sunset?.getTime()).toBeGreaterThan(
      byId.getPetById?.deprecation?.getTime() ?? Infinity,
    );
    expect(byId.listOrders).toMatchObject({
      method: 'GET',
      path: '/store/orders',
      tag: 'Store',
      inferred: false,
    });
    expect(byId.createPet?.inferred).toBe(true);
    expect(byId.updateInventory?.stability).toBe('experimental');
    expect(operations.filter((o) => o.stability === 'beta').length).toBeGreaterThan(0);
    expect(operations.every((o) => o.requiresAuth)).toBe(true);
  });

  it('declares the rate-limit headers on every response, Retry-After on 429, deprecation headers on getPetById', async () => {
    const { operations } = await loadSpec();
    for (const op of operations) {
      for (const r of op.responses) {
        for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
          expect(r.headers, `${op.id} ${r.status}`).toContain(h);
        }
        if (r.status === '429') expect(r.headers).toContain('retry-after');
        if (['400', '401', '404', '429'].includes(r.status)) {
          expect(r.schema?.required, `${op.id} ${r.status} uses Error`).toEqual([
            'code',
            'message',
            'status',
          ]);
        }
        // Shared error responses (400, 401, 429, 500) are $refs; the operation's own ones declare the headers.
        if (op.deprecated && ['200', '404', '410'].includes(r.status)) {
          expect(r.headers, `${op.id} ${r.status}`).toEqual(
            expect.arrayContaining(['deprecation', 'sunset', 'link']),
          );
        }
      }
      for (const status of ['400', '401', '429'])
        expect(
          op.responses.map((r) => r.status),
          op.id,
        ).toContain(status);
    }
  });

  it('rejects a document that is not OpenAPI with one line naming the file', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'spec-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'openapi: 3.0.3\ninfo: {title: x}\npaths: {}\n');
    await expect(loadSpec(bad)).rejects.toThrow(/^spec .*bad\.yaml: /);
    const swagger = join(dir, 'swagger.yaml');
    writeFileSync(swagger, 'swagger: "2.0"\ninfo: {title: x, version: "1"}\npaths: {}\n');
    await expect(loadSpec(swagger)).rejects.toThrow(/OpenAPI 3 document is required/);
  });
});
