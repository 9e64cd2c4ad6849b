import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.ts';

/**
 * The README and docs/ held to the code: a reader copies a command from them, so every relative link
 * must resolve, every `petstore-load X` must be a command, and every `--flag` named in code must be
 * in the `--help` of the command it is written for. Help texts come from the CLI itself, so a flag
 * renamed or dropped in src/cli fails here until the pages follow.
 */

const ROOT = resolve(import.meta.dirname, '../..');

const ALL = ['run', 'report', 'compare', 'merge', 'capacity', 'bench', 'serve', 'init', 'types'];

/**
 * The commands each page documents: a flag in its code must be in the help of one of them, unless
 * the code names its command itself (`npx petstore-load serve --fault-...` on the run page). A new
 * page must say here what it documents.
 */
const PAGES: Record<string, string[]> = {
  'README.md': ALL,
  'docs/run.md': ['run'],
  'docs/capacity.md': ['capacity'],
  'docs/bench.md': ['bench'],
  'docs/serve.md': ['serve'],
  'docs/multi-generator.md': ['run'],
  'docs/metrics.md': ['run', 'capacity', 'bench'],
  'docs/network.md': ['run', 'capacity', 'bench'],
  'docs/results.md': ['run', 'report', 'compare', 'merge'],
  'docs/exit-codes.md': ALL,
  'docs/checks.md': ['run', 'serve'],
  'docs/isolation.md': ['run', 'serve'],
  'docs/testing.md': ['run'],
  'docs/ci.md': ['run'],
  'docs/install.md': ['run', 'init', 'types'],
  'docs/your-api.md': ['init', 'types', 'run'],
};

/** Code that runs another program: its flags are that program's (vitest, Prometheus, curl, Node, V8). */
const FOREIGN =
  /^(?:\$\s*)?(?:npx (?:vitest|biome|tsc|--package)\b|npm\b|prometheus\b|curl\b|node --|BENCH_NODE_FLAGS=|v8\.setFlagsFromString)/;

/** `--name`, not `--name.more` (Prometheus) nor the `--fault-` of `--fault-...`. */
const FLAG = /(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w.-])/g;
const NAMED_COMMAND = /petstore-load(?:\.js)?\s+(?!petstore-load)([a-z][\w-]*)/g;

interface Code {
  /** A code block's line (continuations joined) or an inline span. */
  text: string;
  line: number;
}

interface Page {
  code: Code[];
  /** Relative link targets outside code, with the line they are on. */
  links: Code[];
  anchors: Set<string>;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(headings: string[]): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headings) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function parsePage(markdown: string): Page {
  const code: Code[] = [];
  const links: Code[] = [];
  const headings: string[] = [];
  const prose: string[] = [];
  let fenced = false;
  let pending = '';
  markdown.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (/^\s*```/.test(raw)) {
      fenced = !fenced;
      prose.push('');
      return;
    }
    if (fenced) {
      pending += raw.replace(/\\$/, ' ');
      if (!raw.endsWith('\\')) {
        code.push({ text: pending.trim(), line });
        pending = '';
      }
      prose.push('');
      return;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(raw);
    if (heading) headings.push(heading[1]!);
    prose.push(raw);
  });
  const text = prose.join('\n');
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  // Inline spans may run over a line break, as a paragraph wraps.
  for (const m of text.matchAll(/`([^`]+)`/g))
    code.push({ text: m[1]!.replace(/\s+/g, ' '), line: lineAt(m.index) });
  const outsideSpans = text.replace(/`[^`]*`/g, (span) => span.replace(/[^\n]/g, ' '));
  for (const m of outsideSpans.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) links.push({ text: m[1]!, line: lineAt(m.index) });
  }
  return { code, links, anchors: anchorsOf(headings) };
}

/** Every flag a command's help names in its option column, aliases included. */
function helpFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    const column = /^\s+(-{1,2}[\w-]+(?:,\s+-{1,2}[\w-]+)*)/.exec(line);
    for (const name of column?.[1]?.split(/,\s+/) ?? []) if (name.startsWith('--')) flags.add(name);
    for (const aliases of line.matchAll(/\[aliases: ([^\]]+)\]/g))
      for (const alias of aliases[1]!.split(/,\s*/)) flags.add(alias.length > 1 ? `--${alias}` : `-${alias}`);
  }
  return flags;
}

function knows(flags: Set<string> | undefined, flag: string): boolean {
  if (!flags) return false;
  // yargs takes --no-X for a boolean --X.
  return flags.has(flag) || (flag.startsWith('--no-') && flags.has(`--${flag.slice(5)}`));
}

interface Cli {
  commands: Set<string>;
  flags: Map<string, Set<string>>;
}

/** What a page gets wrong against the CLI: one line per finding, `file:line: what`. */
function findings(
  file: string,
  markdown: string,
  cli: Cli,
  fileExists: (path: string) => string | undefined,
) {
  const page = parsePage(markdown);
  const documents = PAGES[file];
  const found: string[] = [];
  if (!documents) found.push(`${file}: not in PAGES: say which commands it documents`);
  for (const { text, line } of page.code) {
    const named = [...text.matchAll(NAMED_COMMAND)].map((m) => m[1]!);
    for (const command of named)
      if (!cli.commands.has(command)) found.push(`${file}:${line}: no command '${command}' in --help`);
    if (/(?<!npx |bin\/|=|petstore-load )petstore-load\s+[a-z-]/.test(text))
      found.push(`${file}:${line}: a bare petstore-load is not on the PATH of a clone: npx petstore-load`);
    if (FOREIGN.test(text)) continue;
    const leading = /^([a-z]+)\s+--/.exec(text)?.[1];
    const own = [...named, ...(leading ? [leading] : [])].filter((command) => cli.commands.has(command));
    const candidates = own.length > 0 ? own : (documents ?? []);
    for (const [flag] of text.matchAll(FLAG))
      if (!candidates.some((command) => knows(cli.flags.get(command), flag)))
        found.push(`${file}:${line}: ${flag} is in no --help of ${candidates.join(', ')}`);
  }
  for (const { text, line } of page.links) {
    const [target = '', anchor] = decodeURIComponent(text).split('#');
    const path = target === '' ? file : join(dirname(file), target);
    const headings = fileExists(path);
    if (headings === undefined) found.push(`${file}:${line}: link to ${path}, which does not exist`);
    else if (anchor && !anchorsOf(headings.split('\n')).has(anchor))
      found.push(`${file}:${line}: no heading #${anchor} in ${path}`);
  }
  return found;
}

/** A file's headings, '' for a directory or a file that is not markdown; undefined when absent. */
function headingsOf(path: string): string | undefined {
  const full = join(ROOT, path);
  if (!existsSync(full)) return undefined;
  if (statSync(full).isDirectory() || !full.endsWith('.md')) return '';
  const lines = readFileSync(full, 'utf8').split('\n');
  let fenced = false;
  const headings: string[] = [];
  for (const line of lines) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) headings.push(heading[1]!);
  }
  return headings.join('\n');
}

/** What `petstore-load ARGS --help` prints, read in process from the CLI's own command table. */
async function help(args: string[]): Promise<string> {
  let text = '';
  await commands([...args, '--help'], (message) => {
    throw new Error(message);
  })
    .exitProcess(false)
    .parseAsync([...args, '--help'], {}, (_error, _argv, output) => {
      text = output;
    });
  return text;
}

const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const cli: Cli = { commands: new Set(), flags: new Map() };

beforeAll(async () => {
  const top = await help([]);
  const each: string[] = [];
  for (const command of ALL) each.push(await help([command]));
  for (const m of top!.matchAll(/^\s+petstore-load ([a-z][\w-]*)/gm)) cli.commands.add(m[1]!);
  ALL.forEach((command, i) => {
    cli.flags.set(command, helpFlags(each[i]!));
  });
}, 60_000);

describe('the README and docs/', () => {
  it('know every command the CLI has, and the CLI every command they name', () => {
    expect([...cli.commands].sort()).toEqual([...ALL].sort());
  });

  it.each(pages)('%s: links resolve, commands exist, flags are in --help', (file) => {
    const markdown = readFileSync(join(ROOT, file), 'utf8');
    expect(findings(file, markdown, cli, headingsOf)).toEqual([]);
  });

  it('every page is linked from the README', () => {
    const readme = parsePage(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const linked = new Set(readme.links.map((l) => relative('.', l.text.split('#')[0]!)));
    expect(pages.filter((p) => p !== 'README.md' && !linked.has(p))).toEqual([]);
  });

  it('catches a bogus flag, a broken link and an unknown command', () => {
    const page = [
      '# Title',
      '',
      'Run `npx petstore-load run --no-such-flag` or see [x](missing.md) and [y](#title) and [z](#nope).',
      '',
      '```sh',
      'npx petstore-load launch --vus 2',
      'npx petstore-load run --vus 2 \\',
      '  --api-key KEY --rate-limit-bogus 3',
      'petstore-load run',
      '```',
    ].join('\n');
    const exists = (path: string) => (path === 'docs/run.md' ? '# Title' : undefined);
    expect(findings('docs/run.md', page, cli, exists)).toEqual([
      "docs/run.md:6: no command 'launch' in --help",
      'docs/run.md:8: --rate-limit-bogus is in no --help of run',
      'docs/run.md:9: a bare petstore-load is not on the PATH of a clone: npx petstore-load',
      'docs/run.md:3: --no-such-flag is in no --help of run',
      'docs/run.md:3: link to docs/missing.md, which does not exist',
      'docs/run.md:3: no heading #nope in docs/run.md',
    ]);
  });
});
