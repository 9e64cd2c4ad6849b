import { InputError } from '../api/input-error.ts';
import type { OpenApiDocument } from '../api/openapi-document.ts';
import type { JsonSchema, Operation, OperationParameter } from '../api/operations.ts';
import type { LoadedSpec } from '../api/spec.ts';

/**
 * The operations a first scenario calls: GETs (they change nothing on a server you may not own),
 * those needing no parameter first, deprecated ones last, in the document's order otherwise. Only
 * operations with an operationId: the generated types name no other.
 */
export function firstOperations(spec: LoadedSpec, count = 2): Operation[] {
  const named = spec.operations.filter(
    (op) => op.method === 'GET' && op.id === operationIdOf(spec.document, op),
  );
  if (named.length === 0)
    throw new InputError(
      `spec ${spec.source}: no GET operation with an operationId to start a scenario from; write its flow with api.call yourself`,
    );
  const cost = (op: Operation) =>
    (op.deprecated ? 2 : 0) + (op.parameters.some((p) => p.required && p.in !== 'cookie') ? 1 : 0);
  return named
    .map((op, i) => ({ op, i }))
    .sort((a, b) => cost(a.op) - cost(b.op) || a.i - b.i)
    .slice(0, count)
    .map(({ op }) => op);
}

function operationIdOf(document: OpenApiDocument, op: Operation): string | undefined {
  const item = document.paths?.[op.path] as Record<string, { operationId?: string } | undefined> | undefined;
  return item?.[op.method.toLowerCase()]?.operationId;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const key = (name: string) => (IDENTIFIER.test(name) ? name : quote(name));

/** A value of a parameter's schema, for a parameter the call must give: its example, default or first enum value. */
function placeholder(schema: JsonSchema | undefined, asText = false): string {
  const s = schema ?? {};
  const given = [s.example, s.default, Array.isArray(s.enum) ? s.enum[0] : undefined].find(
    (v) => v !== undefined,
  );
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (asText) return quote(given === undefined ? placeholderText(s) : String(given));
  if (type === 'integer' || type === 'number') return typeof given === 'number' ? String(given) : '1';
  if (type === 'boolean') return typeof given === 'boolean' ? String(given) : 'true';
  if (type === 'array') return `[${placeholder(s.items as JsonSchema | undefined)}]`;
  if (type === 'object') return '{}';
  return quote(given === undefined ? placeholderText(s) : String(given));
}

function placeholderText(schema: JsonSchema): string {
  if (schema.format === 'uuid') return '00000000-0000-0000-0000-000000000000';
  if (schema.format === 'date') return '2026-01-01';
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  return 'example';
}

/** `{ path: { petId: 1 }, query: { ... } }` for an operation's required parameters, or '' for none. */
function callInput(op: Operation): string {
  const parts: string[] = [];
  const members = { path: 'path', query: 'query', header: 'headers' } as const;
  for (const where of ['path', 'query', 'header'] as const) {
    const params = op.parameters.filter((p: OperationParameter) => p.in === where && p.required);
    if (params.length === 0) continue;
    const fields = params.map((p) => `${key(p.name)}: ${placeholder(p.schema, where === 'header')}`);
    parts.push(`${members[where]}: { ${fields.join(', ')} }`);
  }
  return parts.length === 0 ? '' : `, { ${parts.join(', ')} }`;
}

export interface FirstScenario {
  /** Its name: the file is load/NAME.ts. */
  name: string;
  /** The command that runs it, as init prints it. */
  command: string;
  /** The command that makes its types again (the types file's header says it too). */
  typesCommand: string;
  /** Module name of the types file, from the scenario (`./api-types.ts`). */
  typesModule: string;
}

/**
 * A scenario file that calls the document's first operations (`firstOperations`), typed by the
 * generated `Api`: a working start that shows the typed `api.call` and its response by status.
 */
export function firstScenarioText(spec: LoadedSpec, scenario: FirstScenario): string {
  const [first, second] = firstOperations(spec);
  const title = spec.document.info?.title ?? 'the API';
  const call = (op: Operation) => `api.call(${quote(op.id)}${callInput(op)})`;
  const placeholders = [first, second].some((op) => op && callInput(op) !== '');
  const success = first?.responses.find((r) => /^2\d\d$/.test(r.status))?.status;
  const body = [
    `        const first = await ${call(first as Operation)};`,
    ...(second
      ? [
          success
            ? `        // After \`first.status === ${success}\`, \`first.body\` is what the document's ${success} response holds.`
            : '        // `first.body` is typed by the status it is compared with, as the document declares its responses.',
          '        if (!first.ok) return;',
          `        await ${call(second)};`,
        ]
      : []),
  ];
  return `import { defineScenario } from 'petstore-load';
import type { Api } from ${quote(scenario.typesModule)};

/**
 * A first scenario against ${title}: two virtual users for 30 s, paced to the free plan's quota
 * (60 requests a minute; \`--plan\`, or \`--plans FILE\` for your own limits).
 *
 * Run it:   ${scenario.command}
 *
 * \`api\` is typed by ${scenario.typesModule}: an operation id, a parameter or a body field the document
 * does not have is a type error (\`npx tsc --noEmit\`). When the document changes, make it again:
 * ${scenario.typesCommand}
 */
export default defineScenario({
  name: ${quote(scenario.name)},
  workload: { executor: 'constant-vus', vus: 2, duration: '30s' },
  thresholds: ['p95<500ms', 'errors<1%'],
  flows: [
    {
      name: 'browse',
      run: async (api: Api) => {
${placeholders ? '        // Parameter values below are placeholders from the document: put in ones your data has.\n' : ''}${body.join('\n')}
      },
    },
  ],
});
`;
}

/** A word as a shell reads it: quoted when it holds anything but the plain characters of a path. */
export const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;

/**
 * The document's first server, its variables at their defaults; a relative one (`/v1`) on
 * localhost:8080, for the user to change.
 */
export function serverUrl(document: OpenApiDocument): { url: string; guessed: boolean } {
  const server = document.servers?.[0];
  const url = (server?.url ?? '').replace(
    /\{([^}]+)\}/g,
    (whole: string, name: string) => server?.variables?.[name]?.default ?? whole,
  );
  if (/^https?:\/\/[^{}]+$/.test(url)) return { url: url.replace(/\/$/, ''), guessed: false };
  return { url: `http://localhost:8080${url.startsWith('/') ? url.replace(/\/$/, '') : ''}`, guessed: true };
}

/** The one command that runs the scenario: against the embedded server for ours, else the document's server. */
export function runCommand(scenarioFile: string, specArg: string | undefined, spec: LoadedSpec) {
  const words = ['npx', 'petstore-load', 'run', scenarioFile];
  if (specArg === undefined) return { command: words.join(' '), note: undefined };
  const { url, guessed } = serverUrl(spec.document);
  words.push('--spec', shellWord(specArg), '--base-url', shellWord(url));
  const needsKey = firstOperations(spec).some((op) => op.requiresAuth);
  return {
    command: `${needsKey ? 'PETSTORE_API_KEY=<your key> ' : ''}${words.join(' ')}`,
    note: guessed ? `the document names no absolute server URL: put yours in --base-url` : undefined,
  };
}
