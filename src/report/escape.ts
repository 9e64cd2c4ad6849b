/**
 * Everything in a result can come from the target (check details quote response headers and bodies,
 * flow errors quote exceptions), so the report treats every string in it as hostile. Markup is built
 * with the `html` tag: interpolations are escaped unless they are `SafeHtml` made by `html` itself.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Safe in text and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

export class SafeHtml {
  readonly value: string;

  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Fragment = SafeHtml | string | number | boolean | null | undefined | readonly Fragment[];

function render(value: Fragment): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  // `cond && html`...`` leaves false behind: render nothing rather than "false".
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Fragment[]): SafeHtml {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Fragment) + strings[i + 1];
  return new SafeHtml(out);
}

/** For text we wrote ourselves and know to be markup (inlined assets). Never for result data. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * JSON that can sit inside a <script> element: `</script>`, `<!--` and the like cannot close or
 * change it, and U+2028/2029 cannot end a line in engines that still treat them as JS line ends.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
