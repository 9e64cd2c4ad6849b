import { html, type SafeHtml } from '../escape.ts';

/** A section's opening as the sections write it: `<section id="…"><h2>Title</h2>`. */
const OPENING = /^\s*<section id="([^"]+)"><h2>([^<]+)<\/h2>/;

/**
 * The table of contents, read off the sections as rendered: a section a run does not have (tenants,
 * capacity, probes) renders as nothing and so gets no entry, and an entry cannot point at an id that
 * is not on the page.
 */
export function tableOfContents(sections: readonly (SafeHtml | '')[]): SafeHtml {
  const entries: { id: string; title: string }[] = [];
  for (const section of sections) {
    const match = OPENING.exec(String(section));
    // The titles are our own literals, already markup-free; decode nothing, escape on the way out.
    if (match) entries.push({ id: match[1] as string, title: match[2] as string });
  }
  return html`<nav id="contents" aria-label="contents"><ol>${entries.map(
    (e) => html`<li><a href="#${e.id}">${e.title}</a></li>`,
  )}</ol></nav>`;
}
