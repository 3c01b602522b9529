/**
 * The HTML of the web pages: escaping, and the layout every page shares (a search box on top, the
 * stylesheet and the one small script from /static, nothing inline, so the Content-Security-Policy
 * of the API holds for the pages too).
 */

/** Text made safe inside HTML elements and quoted attributes. */
export function escape(text: unknown): string {
  return String(text ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** A fragment of HTML: its parts are escaped unless they are fragments themselves. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Tagged template: `html\`<p>${value}</p>\`` escapes value; arrays and Html pass as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    const part = (v: unknown): string =>
      v instanceof Html
        ? v.text
        : Array.isArray(v)
          ? v.map(part).join('')
          : v === undefined || v === null || v === false
            ? ''
            : escape(v);
    out += part(value) + strings[i + 1];
  });
  return new Html(out);
}

export interface SourceChoice {
  sourceID: number;
  label: string;
}

export interface PageOptions {
  title: string;
  /** The search box's current text and source. */
  q?: string;
  source?: number;
  /** The sources of the source picker. */
  sources: SourceChoice[];
  /** The page's own URL, for the canonical link. */
  canonical?: string;
}

/** A whole page: head, the search form, the body. */
export function page(options: PageOptions, body: Html): string {
  const choices = options.sources.map(
    (s) =>
      html`<option value="${s.sourceID}"${options.source === s.sourceID ? new Html(' selected') : ''}>${s.label}</option>`,
  );
  return `<!doctype html>${
    html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · chemxref</title>
${options.canonical ? html`<link rel="canonical" href="${options.canonical}">` : ''}
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/chemxref.css">
<script src="/static/chemxref.js" defer></script>
</head>
<body>
<header>
<a class="home" href="/">chemxref</a>
<form class="search" action="/search" method="get" role="search">
<label for="q">Name, InChIKey, InChI, UCI, SMILES, <code>source:id</code> or a compound id</label>
<div class="row">
<input id="q" name="q" type="search" value="${options.q ?? ''}" required autocomplete="off" spellcheck="false" placeholder="RZVAJINKPMORJF-UHFFFAOYSA-N">
<label class="visually-hidden" for="source">in source</label>
<select id="source" name="source"><option value="">any source</option>${choices}</select>
<button type="submit">Search</button>
</div>
</form>
<nav><a href="/sources">Sources</a> <a href="/api/docs">API</a></nav>
</header>
<main>
${body}
</main>
<footer>Data licences of the bundled data: ChEMBL CC BY-SA 3.0 (attribution: ChEMBL, EMBL-EBI); ZINC free to use (Irwin and Shoichet, UCSF); PubChem and NCI/DTP public domain; CAS Registry Numbers from CAS Common Chemistry CC BY-NC 4.0 (attribution: CAS, a division of the American Chemical Society); Debian chemical-structures BSD-style; RDKit data BSD; @datagrok/chem MIT; the PyPI package chemicals 1.5.2 MIT (PubChem-derived).</footer>
</body>
</html>`.text
  }\n`;
}
