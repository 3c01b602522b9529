/** Pieces the web pages share: a rendered page, messages, depictions and lists of structures. */
import type { CompoundDocument } from '../engine/documents';
import { html, type Html } from './html';

/** A page before its layout: its status, title and body. */
export interface Rendered {
  status: number;
  title: string;
  body: Html;
  canonical?: string;
}

/** A page that only says something: why a search cannot run, or that nothing was found. */
export function message(status: number, title: string, text: Html | string): Rendered {
  return { status, title, body: html`<h1>${title}</h1><p class="message" role="alert">${text}</p>` };
}

export function depiction(uci: number, size: 'large' | 'thumb', alt: string): Html {
  return html`<img class="${size}" src="/api/v1/images/${uci}" alt="${alt}" loading="lazy">`;
}

/** A value with its copy button beside its first line (chemxref.js shows the button where the browser can copy). */
export function copyable(value: string, name: string): Html {
  return html`<span class="copyable"><code>${value}</code> <button type="button" class="copy" data-copy="${value}" hidden>Copy ${name}</button></span>`;
}

export function plural(count: number, word: string): string {
  return `${count.toLocaleString('en')} ${word}${count === 1 ? '' : 's'}`;
}

/** What a structure list shows of a structure. */
export type Listed = Pick<CompoundDocument, 'uci' | 'standardInchiKey'>;

/** Structures as a list of thumbnails with their UCI and key, each linking to its page. */
export function structureList<S extends Listed>(
  structures: S[],
  note: (structure: S) => Html | string = () => '',
): Html {
  return html`<ul class="structures">${structures.map((s) => html`<li><a href="/compound/${s.uci}">${depiction(s.uci, 'thumb', `structure of UCI ${s.uci}`)}<span>UCI ${s.uci}</span><code>${s.standardInchiKey}</code></a>${note(s)}</li>`)}</ul>`;
}

/** Several structures an input stands for: a list to pick from. */
export function structuresPage<S extends Listed>(
  title: string,
  said: string,
  structures: S[],
  note?: (s: S) => Html | string,
): Rendered {
  return {
    status: 200,
    title,
    body: html`<h1>${title}</h1><p class="understood">Searched: ${said}.</p>${structureList(structures, note)}`,
  };
}
