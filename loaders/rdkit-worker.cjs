// Worker thread: computes Standard InChIs from SMILES or molfiles with @rdkit/rdkit (WASM).
// Plain JavaScript on purpose: a worker is started with `node`, without the TypeScript loader.
// The WASM module can abort on huge molecules; the parent restarts this worker when it dies.
const { parentPort } = require('node:worker_threads');
const initRDKitModule = require('@rdkit/rdkit');

const ready = initRDKitModule();

parentPort.on('message', async ({ id, request: structures }) => {
  const rdkit = await ready;
  const results = structures.map((text) => {
    let mol = null;
    try {
      mol = rdkit.get_mol(text);
      if (!mol || (mol.is_valid && !mol.is_valid())) return { error: 'the toolkit cannot read this structure' };
      const inchi = mol.get_inchi();
      if (!inchi || !inchi.startsWith('InChI=1S/')) return { error: 'the toolkit gives no Standard InChI for this structure' };
      return { inchi };
    } catch (error) {
      return { error: `the toolkit failed on this structure: ${error && error.message ? error.message : String(error)}` };
    } finally {
      if (mol) mol.delete();
    }
  });
  parentPort.postMessage({ id, result: results });
});
