/**
 * The three wire formats of the legacy API (docs/legacy.md): JSON by default, UniChem 1's XML
 * (`<opt><data .../></opt>`, as Perl's XML::Simple wrote it) for `Accept: text/xml`, and JSONP for
 * `?callback=name`. No Express here: the handlers pass what they read from the request.
 */
import { InvalidQuery } from '../../domain/errors';

/** A legacy answer: every value a string (or null), in lists and objects. */
export type LegacyValue = string | null | LegacyValue[] | { [key: string]: LegacyValue };

export type LegacyFormat = { kind: 'json' } | { kind: 'xml' } | { kind: 'jsonp'; callback: string };

// A plain JavaScript identifier: no dots, brackets, quotes or parentheses, so a callback name can
// never carry script of its own.
const identifier = /^[A-Za-z_$][A-Za-z0-9_$]{0,127}$/;

/**
 * The format a request asks for. `callback` is the `callback` query value (a JSONP request wins
 * over the Accept header); `prefersXml` says whether the Accept header prefers XML to JSON.
 * InvalidQuery when the callback is not a plain identifier.
 */
export function legacyFormat(callback: unknown, prefersXml: boolean): LegacyFormat {
  if (callback !== undefined) {
    if (typeof callback !== 'string' || !identifier.test(callback)) {
      throw new InvalidQuery(
        '"callback" must be a plain JavaScript identifier (letters, digits, _ and $, not starting with a digit)',
      );
    }
    return { kind: 'jsonp', callback };
  }
  return prefersXml ? { kind: 'xml' } : { kind: 'json' };
}

const xmlName = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function escapeXml(text: string): string {
  return (
    text
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex -- control characters are what this removes
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}

function isScalar(value: LegacyValue): value is string | null {
  return value === null || typeof value === 'string';
}

/**
 * The children a key contributes: a list repeats its element; a key that is not an XML name (a source id) becomes
 * `<data key="...">`.
 */
function children(key: string, value: LegacyValue): string {
  const valid = xmlName.test(key);
  const tag = valid ? key : 'data';
  const keyAttribute = valid ? '' : ` key="${escapeXml(key)}"`;
  if (Array.isArray(value)) return value.map((item) => element(tag, item, keyAttribute)).join('');
  return element(tag, value, keyAttribute);
}

function element(tag: string, value: LegacyValue, attributes = ''): string {
  if (value === null) return `<${tag}${attributes}/>`;
  if (typeof value === 'string') return `<${tag}${attributes}>${escapeXml(value)}</${tag}>`;
  // A row of a table (H=1): one <value> per cell.
  if (Array.isArray(value))
    return `<${tag}${attributes}>${value.map((cell) => element('value', cell)).join('')}</${tag}>`;
  let attrs = attributes;
  let inner = '';
  for (const [key, item] of Object.entries(value)) {
    if (isScalar(item) && xmlName.test(key)) {
      if (item !== null) attrs += ` ${key}="${escapeXml(item)}"`;
    } else {
      inner += children(key, item);
    }
  }
  return inner === '' ? `<${tag}${attrs}/>` : `<${tag}${attrs}>${inner}</${tag}>`;
}

const xmlDeclaration = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** UniChem 1's XML: a list becomes `<data>` elements in `<opt>`, an object the attributes and children of `<opt>`. */
export function toXml(value: LegacyValue): string {
  if (Array.isArray(value)) return renderList(legacyList({ kind: 'xml' }), value);
  return `${xmlDeclaration}${element('opt', value)}\n`;
}

function toJson(value: unknown): string {
  // U+2028 and U+2029 are valid in JSON but end a line in older JavaScript, so a JSONP body escapes them.
  return JSON.stringify(value)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const contentTypes = {
  json: 'application/json; charset=utf-8',
  xml: 'text/xml; charset=utf-8',
  jsonp: 'application/javascript; charset=utf-8',
};

/**
 * A list answer written a part at a time (a mapping of millions of pairs): `open`, then `items` for
 * each part in turn, then `close`. The parts joined are the bytes `renderLegacy` gives for the whole
 * list, in every format.
 */
export interface LegacyListWriter {
  type: string;
  open: string;
  /** The text of the next items of the list (its separators included). */
  items: (items: LegacyValue[]) => string;
  close: string;
}

/** A writer of one list answer in `format`. */
export function legacyList(format: LegacyFormat): LegacyListWriter {
  const type = contentTypes[format.kind];
  if (format.kind === 'xml')
    return {
      type,
      open: `${xmlDeclaration}<opt>`,
      items: (items) => items.map((item) => element('data', item)).join(''),
      close: '</opt>\n',
    };
  const encode = format.kind === 'jsonp' ? toJson : (item: LegacyValue) => JSON.stringify(item);
  let first = true;
  const items = (list: LegacyValue[]): string => {
    if (list.length === 0) return '';
    const text = list.map(encode).join(',');
    const separated = first ? text : `,${text}`;
    first = false;
    return separated;
  };
  return format.kind === 'jsonp'
    ? { type, open: `/**/ ${format.callback}([`, items, close: ']);' }
    : { type, open: '[', items, close: ']' };
}

function renderList(writer: LegacyListWriter, items: LegacyValue[]): string {
  return writer.open + writer.items(items) + writer.close;
}

/** The Content-Type and body of `value` in `format`. */
export function renderLegacy(format: LegacyFormat, value: LegacyValue): { type: string; body: string } {
  if (Array.isArray(value)) return { type: contentTypes[format.kind], body: renderList(legacyList(format), value) };
  switch (format.kind) {
    case 'json':
      return { type: contentTypes.json, body: JSON.stringify(value) };
    case 'xml':
      return { type: contentTypes.xml, body: toXml(value) };
    case 'jsonp':
      return { type: contentTypes.jsonp, body: `/**/ ${format.callback}(${toJson(value)});` };
  }
}

/** An error in the legacy shape: `{"error": message}`, or `<opt><error>message</error></opt>`. */
export function renderLegacyErrorBody(format: LegacyFormat, message: string): { type: string; body: string } {
  if (format.kind === 'xml') {
    return {
      type: 'text/xml; charset=utf-8',
      body: `${xmlDeclaration}<opt><error>${escapeXml(message)}</error></opt>\n`,
    };
  }
  return renderLegacy(format, { error: message });
}
