// Worker thread: the Standard InChI of one SMILES or molfile, with @rdkit/rdkit (WASM), for the API.
// Plain JavaScript on purpose: a worker is started with `node`, without the TypeScript loader.
// RDKit's get_mol answers null to text it cannot read and writes why in its log, captured here.
// An exception of the WASM module itself (out of bounds, stack overflow on a huge molecule) leaves
// the module unusable: it is thrown out of the worker, which the parent then replaces.
const { parentPort } = require('node:worker_threads');
const initRDKitModule = require('@rdkit/rdkit');

const ready = initRDKitModule().then((rdkit) => ({ rdkit, log: rdkit.set_log_capture('rdApp.*') }));
// The parent counts a structure's time from here: loading the module is not part of it.
ready.then(() => parentPort.postMessage({ ready: true }));

/** The log's lines in plain words: no timestamps, no echo of the input under a position marker, no repeats. */
function reasonOf(buffer) {
  const lines = buffer.split('\n').map((line) => line.replace(/^\[\d\d:\d\d:\d\d\] ?/, '').trim());
  const kept = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i].replace(/^SMILES Parse Error: /, '').replace(/:$/, '');
    if (/^[~^ ]*\^$/.test(lines[i + 1] ?? '')) {
      i += 1;
      continue;
    }
    if (line === '' || /^\*+$/.test(line) || /^(Violation occurred|Failed Expression|Failed parsing SMILES)/.test(line))
      continue;
    if (!kept.includes(line)) kept.push(line);
  }
  const reason = kept.join('; ');
  return reason.length > 400 ? `${reason.slice(0, 400)}...` : reason;
}

/** Atoms an InChI cannot hold: query atoms, R-groups and attachment points (atomic number 0). */
function queryAtomCount(mol) {
  const json = JSON.parse(mol.get_json());
  const z = json.defaults && json.defaults.atom ? json.defaults.atom.z : 6;
  return json.molecules[0].atoms.filter((atom) => (atom.z === undefined ? z : atom.z) === 0).length;
}

function standardInchi(rdkit, log, { type, text }) {
  // get_mol reads a molfile when the text has an M  END line, else a SMILES: the type decides here.
  if (type === 'smiles' && /[\r\n]/.test(text)) return { unreadable: 'a SMILES is a single line of text' };
  if (type === 'smiles' && text.includes('M  END'))
    return { unreadable: 'this is a molfile: send it with "type": "molfile"' };
  if (type === 'molfile' && !/^M {2}END\s*$/m.test(text))
    return { unreadable: 'a molfile ends with the line "M  END", and this text has none' };
  log.clear_buffer();
  const mol = rdkit.get_mol(text);
  if (!mol || !mol.is_valid()) {
    if (mol) mol.delete();
    const reason = reasonOf(log.get_buffer());
    return {
      unreadable:
        reason ||
        (type === 'molfile' ? 'check its counts line and its atom and bond blocks' : 'the toolkit gives no reason'),
    };
  }
  try {
    if (mol.get_num_atoms() === 0) return { noInchi: 'it has no atoms' };
    const queryAtoms = queryAtomCount(mol);
    if (queryAtoms > 0)
      return {
        noInchi:
          `it has ${queryAtoms === 1 ? 'a query atom' : `${queryAtoms} query atoms`} ` +
          '(*, R#, A, Q or an attachment point), which an InChI cannot hold',
      };
    log.clear_buffer();
    const inchi = mol.get_inchi();
    if (!inchi || !inchi.startsWith('InChI=1S/'))
      return { noInchi: reasonOf(log.get_buffer()) || 'the InChI library gave none' };
    return { inchi };
  } finally {
    mol.delete();
  }
}

parentPort.on('message', ({ id, request }) => {
  ready.then(({ rdkit, log }) => {
    let result;
    try {
      result = standardInchi(rdkit, log, request);
    } catch (error) {
      setImmediate(() => {
        throw error;
      });
      return;
    }
    parentPort.postMessage({ id, result });
  });
});
