import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The files the report inlines so that it opens offline and asks no host for anything: uPlot (from
 * node_modules, so it follows the installed version) and the page's own script and styles. Read
 * once per process: a CLI that renders several reports reads them once.
 */
export interface Assets {
  uplotJs: string;
  uplotCss: string;
  clientJs: string;
  css: string;
}

let cached: Assets | undefined;

export function assets(): Assets {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const read = (path: string | URL) => readFileSync(path, 'utf8');
  const own = (name: string) => read(new URL(name, import.meta.url));
  cached = {
    uplotJs: read(require.resolve('uplot/dist/uPlot.iife.min.js')),
    uplotCss: read(require.resolve('uplot/dist/uPlot.min.css')),
    // One module in three files, builders first: each file stays one idea (and under the size rule).
    clientJs: ['./client-plots.js', './client-quota.js', './client.js'].map(own).join('\n'),
    css: own('./report.css'),
  };
  for (const [name, text] of Object.entries(cached)) {
    // Inlined as is: a closing tag (or `<!--`, which changes how a script ends) would end the element
    // early and spill the rest as markup.
    if (/<\/(script|style)|<!--/i.test(text)) throw new Error(`report asset ${name} contains a closing tag`);
  }
  return cached;
}
