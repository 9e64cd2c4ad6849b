import { html, type SafeHtml } from '../escape.ts';
import { count } from '../format.ts';

/** A count cell: zeros fade so that what did happen stands out; `bad` marks what should be zero. */
export function countCell(n: number, bad = false): SafeHtml {
  if (n === 0) return html`<td class="num zero">0</td>`;
  return html`<td class="num${bad ? ' bad' : ''}">${count(n)}</td>`;
}

export const numCell = (text: string) => html`<td class="num">${text}</td>`;
