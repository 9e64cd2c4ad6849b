import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { InputError } from '../../src/api/input-error.ts';
import { nearest } from '../../src/api/nearest-name.ts';
import { capacityOptions } from '../../src/cli/command-options.ts';
import { type PlanProbeConfig, resolveCapacityConfig } from '../../src/config/capacity.ts';
import type { CapacityArgs } from '../../src/config/capacity-flags.ts';
import { printable } from '../../src/config/capacity-print.ts';

/**
 * `capacity --spec FILE [--operation ID] [--param NAME=VALUE]`: the operation probed and its values,
 * chosen while the flags are resolved (src/config/capacity-operation.ts), and every refusal one line.
 */

const WIDGETS = new URL('../fixtures/openapi/widgets.openapi.yaml', import.meta.url).pathname;
const TARGET = ['--base-url', 'http://127.0.0.1:9/api', '--api-key', 'free=k-free'];

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-capacity-operation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small document of these operations, written to the test's directory. */
function documentOf(name: string, paths: Record<string, unknown>): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ openapi: '3.0.3', info: { title: name, version: '1' }, paths }));
  return file;
}

const ok = { '200': { description: 'ok' } };
const pathParam = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', ...extra },
});

async function resolveFlags(argv: string[]): Promise<PlanProbeConfig> {
  const args = capacityOptions(yargs(argv).strict().exitProcess(false)).parseSync() as CapacityArgs;
  const c = await resolveCapacityConfig(args);
  if (c.mode !== 'plans') throw new Error('expected the plan probes');
  return c;
}

/** The message of the InputError a resolution ends in. */
async function refusal(argv: string[]): Promise<string> {
  const error = await resolveFlags(argv).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  const message = (error as Error).message;
  expect(message.split('\n')).toHaveLength(1);
  return message;
}

describe('capacity without --spec', () => {
  it("probes the pet store's listPets with a page of one, as it always did", async () => {
    const c = await resolveFlags(TARGET);
    expect(c.probe.operation.id).toBe('listPets');
    expect(c.probe.input).toEqual({ path: {}, query: { limit: 1 } });
    expect(c.spec).toBe('petstore.openapi.yaml (built in)');
  });

  it.each([
    ['--operation', 'getPetById'],
    ['--param', 'petId=3'],
  ])('refuses %s without --spec', async (flag, value) => {
    expect(await refusal([...TARGET, flag, value])).toMatch(
      new RegExp(`^${flag} names an operation .*--spec FILE`),
    );
  });
});

describe('capacity --spec: the default operation', () => {
  it('a GET needing no value comes first, wherever the document lists it; a deprecated one last', async () => {
    const spec = documentOf('free-get', {
      '/old': { get: { operationId: 'oldThings', deprecated: true, responses: ok } },
      '/things/{id}': {
        get: { operationId: 'getThing', parameters: [pathParam('id', { example: 'a' })], responses: ok },
      },
      '/things': {
        post: { operationId: 'makeThing', responses: ok },
        get: { operationId: 'listThings', responses: ok },
      },
    });
    const c = await resolveFlags([...TARGET, '--spec', spec]);
    expect(c.probe.operation).toMatchObject({ id: 'listThings', method: 'GET', path: '/things' });
    expect(c.probe.input).toEqual({ path: {}, query: {} });
    expect(c.spec).toBe(spec);
    expect(c.operations.map((op) => op.id)).toContain('makeThing');
  });

  it("every GET needing values: the first the document fills, from an example, a default or an enum's first", async () => {
    const c = await resolveFlags([...TARGET, '--spec', WIDGETS]);
    expect(c.probe.operation).toMatchObject({ id: 'getWidget', method: 'GET', path: '/widgets/{widgetId}' });
    // widgetId's example, view's first enum value; lang is optional and left out.
    expect(c.probe.input).toEqual({ path: { widgetId: '7' }, query: { view: 'summary' } });
  });

  it('a value from each source the document may give it in, the parameter before its schema', async () => {
    const spec = documentOf('sources', {
      '/a/{x}': {
        get: {
          operationId: 'byExamples',
          parameters: [{ ...pathParam('x'), examples: { one: { value: 'ex' } } }],
          responses: ok,
        },
      },
      '/b/{x}': {
        get: {
          operationId: 'bySchemaExample',
          parameters: [pathParam('x', { example: 'sx', default: 'd' })],
          responses: ok,
        },
      },
      '/c/{x}': {
        get: {
          operationId: 'byDefault',
          parameters: [pathParam('x', { default: 'd', enum: ['e', 'd'] })],
          responses: ok,
        },
      },
    });
    const values = async (operation: string) =>
      (await resolveFlags([...TARGET, '--spec', spec, '--operation', operation])).probe.input.path;
    expect(await values('byExamples')).toEqual({ x: 'ex' });
    expect(await values('bySchemaExample')).toEqual({ x: 'sx' });
    expect(await values('byDefault')).toEqual({ x: 'd' });
  });

  it('--param fills a value the document does not give, and picks the GET that takes it', async () => {
    const c = await resolveFlags([...TARGET, '--spec', WIDGETS, '--param', 'widgetId=12']);
    expect(c.probe.operation.id).toBe('listParts');
    expect(c.probe.input).toEqual({ path: { widgetId: '12' }, query: {} });
  });

  it('refuses, in one line naming the operations, when no GET can be filled', async () => {
    const spec = documentOf('unfillable', {
      '/users/{userId}': {
        get: { operationId: 'getUser', parameters: [pathParam('userId')], responses: ok },
      },
      '/orders': {
        get: {
          operationId: 'findOrders',
          parameters: [{ name: 'status', in: 'query', required: true, schema: { type: 'string' } }],
          responses: ok,
        },
      },
    });
    expect(await refusal([...TARGET, '--spec', spec])).toBe(
      `--spec ${spec}: every GET operation needs parameter values the document does not give (getUser: userId; findOrders: status): name one with --operation ID and give its values with --param NAME=VALUE`,
    );
  });

  it('refuses a document with no GET, and a --param no GET takes', async () => {
    const spec = documentOf('no-get', { '/jobs': { post: { operationId: 'startJob', responses: ok } } });
    expect(await refusal([...TARGET, '--spec', spec])).toMatch(
      /^--spec .* has no GET operation to probe by default .*--operation ID \(operations: startJob\)$/,
    );
    expect(await refusal([...TARGET, '--spec', WIDGETS, '--param', 'colour=red'])).toMatch(
      /^--param colour: no GET operation of --spec .* takes it: .*\(operations: getWidget, listParts\)$/,
    );
  });
});

describe('capacity --spec --operation ID', () => {
  it('probes the operation named, with the key where its security scheme puts it', async () => {
    const c = await resolveFlags([
      ...TARGET,
      '--spec',
      WIDGETS,
      '--operation',
      'listParts',
      '--param',
      'widgetId=3',
    ]);
    expect(c.probe.operation).toMatchObject({ id: 'listParts', path: '/widgets/{widgetId}/parts' });
    expect(c.probe.operation.auth).toMatchObject({ in: 'header', name: 'x-widget-key', bearer: false });
    const printed = JSON.parse(JSON.stringify(printable(c)));
    expect(printed.operation).toEqual({
      id: 'listParts',
      method: 'GET',
      path: '/widgets/{widgetId}/parts',
      values: { path: { widgetId: '3' }, query: {} },
    });
    expect(printed.auth).toEqual({
      listParts: { placement: 'header x-widget-key', from: 'security scheme widgetKey' },
    });
  });

  it('--auth-header puts the key over what the scheme says, for the probed operation too', async () => {
    const c = await resolveFlags([...TARGET, '--spec', WIDGETS, '--auth-header', 'X-Other']);
    expect(c.probe.operation.auth).toMatchObject({ in: 'header', name: 'x-other', from: '--auth-header' });
  });

  it('--param over the document; a threshold may name the operation probed', async () => {
    const c = await resolveFlags([
      ...TARGET,
      '--spec',
      WIDGETS,
      '--operation',
      'getWidget',
      '--param',
      'widgetId=40',
      '--param',
      'lang=fr',
      '--threshold',
      'getWidget:p99<300ms',
    ]);
    expect(c.probe.input).toEqual({ path: { widgetId: '40' }, query: { view: 'summary', lang: 'fr' } });
    expect(c.thresholds.map((t) => t.expression)).toEqual(['getWidget:p99<300ms']);
  });

  it.each([
    [
      ['--operation', 'getWidgte'],
      /^--operation 'getWidgte': no such operation in .*; did you mean 'getWidget'\? \(operations: createWidget, getWidget, deleteWidget, listParts\)$/,
    ],
    [
      ['--operation', 'createWidget'],
      /^--operation createWidget: POST \/widgets \(createWidget\) requires a request body/,
    ],
    [
      ['--operation', 'listParts'],
      /^GET \/widgets\/\{widgetId\}\/parts \(listParts\), named by --operation, needs a value for widgetId, .*--param NAME=VALUE$/,
    ],
    [
      ['--operation', 'getWidget', '--param', 'colour=red'],
      /^--param colour: GET \/widgets\/\{widgetId\} \(getWidget\), named by --operation, has no such path or query parameter \(its parameters: widgetId, view, lang\)$/,
    ],
    [['--param', 'widgetId'], /^--param: expected NAME=VALUE, got 'widgetId'$/],
    [['--param', 'widgetId=1', '--param', 'widgetId=2'], /^--param widgetId is given twice$/],
  ])('refuses %j in one line', async (argv, message) => {
    expect(await refusal([...TARGET, '--spec', WIDGETS, ...argv])).toMatch(message);
  });

  it('refuses --spec against the embedded server, and with --tenants', async () => {
    expect(await refusal(['--spec', WIDGETS])).toMatch(/^--spec names your own API: give --base-url/);
    await expect(
      resolveCapacityConfig(
        capacityOptions(
          yargs(['--tenants', 'pro', '--spec', WIDGETS]).strict().exitProcess(false),
        ).parseSync() as CapacityArgs,
      ),
    ).rejects.toThrow(/^--spec probes one operation of your own document: --tenants/);
  });

  it('names no operation for an id far from every one', () => {
    expect(nearest('getWidgets', ['getWidget', 'listParts'])).toBe('getWidget');
    expect(nearest('GETWIDGET', ['getWidget'])).toBe('getWidget');
    expect(nearest('frobnicate', ['getWidget', 'listParts'])).toBeUndefined();
  });
});
