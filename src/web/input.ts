/**
 * What a chemist typed in the search box: a Standard InChIKey, its first block, a Standard InChI, a
 * SMILES, a SMARTS, a UCI, `source:id`, or a compound id or name (in the source picked, or in any
 * source).
 * Decided from the text alone, unless the form says it is a SMILES or a SMARTS (the structure
 * editor's does); each kind says in words what it understood.
 */
import type { SourceDocument } from '../engine/documents';

export type Understood =
  | { kind: 'inchikey'; standardInchiKey: string; said: string }
  | { kind: 'connectivityBlock'; connectivityBlock: string; said: string }
  | { kind: 'inchi'; inchi: string; said: string }
  | { kind: 'smiles'; smiles: string; said: string }
  | { kind: 'smarts'; smarts: string; said: string }
  | { kind: 'uci'; uci: number; said: string }
  | { kind: 'sourceId'; source: SourceDocument; compoundId: string; said: string }
  | { kind: 'anySource'; compoundId: string; said: string }
  | { kind: 'refused'; message: string };

function sourceLabel(source: SourceDocument): string {
  return source.nameLabel ?? source.name;
}

/** A source named by its id, name or label, case aside. */
function findSource(sources: SourceDocument[], name: string): SourceDocument | undefined {
  const wanted = name.trim().toLowerCase();
  return sources.find(
    (s) =>
      String(s.sourceID) === wanted || s.name.toLowerCase() === wanted || (s.nameLabel ?? '').toLowerCase() === wanted,
  );
}

/** Text that reads as a SMILES rather than an id: bonds, branches, rings or charges in brackets. */
function looksLikeSmiles(text: string): boolean {
  return (
    /^[A-Za-z0-9@+\-[\]()=#$%\\/.:*]+$/.test(text) &&
    /[=#()[\]@]|[cnos][0-9]|^[cnos]+[0-9]?$/.test(text) &&
    !/^[A-Z]+[0-9]+$/.test(text)
  );
}

/**
 * Text that can only be a SMARTS: a SMILES's characters and SMARTS's own, with an any-bond (`~`) or
 * an atom in brackets holding a SMARTS primitive (`[#6]`, `[C,N]`, `[!O]`, `[C;R]`, `[$(...)]`).
 */
function looksLikeSmarts(text: string): boolean {
  return (
    /^[A-Za-z0-9@+\-[\]()=#$%\\/.:*~!&;,]+$/.test(text) && (text.includes('~') || /\[[^\]]*[#,;&!$][^\]]*\]/.test(text))
  );
}

/** How the text is to be read when the form says so: the structure editor's SMILES, a substructure's SMARTS. */
export type Reading = 'smiles' | 'smarts';

const smilesSaid = 'a SMILES, by the Standard InChIKey computed from it';
const smartsSaid = 'a SMARTS: the structures containing it';

/** Reads the search box (`q`), the source picker (`source`, a source id or empty) and the reading the form asks for. */
export function understand(
  q: string,
  source: number | undefined,
  sources: SourceDocument[],
  reading?: Reading,
): Understood {
  const text = q.trim();
  if (text === '')
    return {
      kind: 'refused',
      message:
        'Type a name, a Standard InChIKey, a Standard InChI, a SMILES, a UCI, source:id (chembl:CHEMBL112) or a compound id.',
    };
  if (reading === 'smiles') return { kind: 'smiles', smiles: text, said: smilesSaid };
  if (reading === 'smarts') return { kind: 'smarts', smarts: text, said: smartsSaid };
  const picked = source === undefined ? undefined : sources.find((s) => s.sourceID === source);
  if (source !== undefined && !picked) return { kind: 'refused', message: `There is no source ${source}.` };

  if (/^inchi=/i.test(text)) {
    if (!text.startsWith('InChI=1S/'))
      return {
        kind: 'refused',
        message: 'This is not a Standard InChI: chemxref holds Standard InChIs, which begin InChI=1S/.',
      };
    return { kind: 'inchi', inchi: text, said: 'a Standard InChI' };
  }
  const key = text.toUpperCase();
  if (/^[A-Z]{14}-[A-Z]{10}-[A-Z]$/.test(key)) {
    if (!/^[A-Z]{14}-[A-Z]{8}SA-[A-Z]$/.test(key))
      return {
        kind: 'refused',
        message:
          `${key} is a non-standard InChIKey (its second block does not end in ` +
          `SA): chemxref holds Standard InChIKeys.`,
      };
    return { kind: 'inchikey', standardInchiKey: key, said: 'a Standard InChIKey' };
  }
  if (!picked && /^[A-Z]{14}$/.test(text)) {
    return {
      kind: 'connectivityBlock',
      connectivityBlock: text,
      said: 'the first block of an InChIKey: every structure of that skeleton',
    };
  }
  const prefixed = /^([^:\s]+):(.+)$/.exec(text);
  if (prefixed && !picked) {
    const named = findSource(sources, prefixed[1]);
    if (named)
      return {
        kind: 'sourceId',
        source: named,
        compoundId: prefixed[2].trim(),
        said: `compound id ${prefixed[2].trim()} in ${sourceLabel(named)}`,
      };
  }
  if (picked)
    return {
      kind: 'sourceId',
      source: picked,
      compoundId: text,
      said: `compound id ${text} in ${sourceLabel(picked)}`,
    };
  if (/^[0-9]{1,15}$/.test(text) && Number(text) > 0)
    return {
      kind: 'uci',
      uci: Number(text),
      said: `UCI ${Number(text)} (pick a source to search ${text} as a compound id)`,
    };
  if (looksLikeSmarts(text)) return { kind: 'smarts', smarts: text, said: smartsSaid };
  if (looksLikeSmiles(text)) return { kind: 'smiles', smiles: text, said: smilesSaid };
  // Plain text is a compound id as a source writes it, or a name (aspirin) in the sources of names.
  return { kind: 'anySource', compoundId: text, said: `compound id or name ${text}, in every source` };
}
