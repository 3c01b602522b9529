// Worker thread: SVG depictions of Standard InChIs with indigo-ketcher (WASM). The InChI library
// rebuilds mobile hydrogens where chemists seldom draw them (paracetamol as an iminol), so the
// molecule is laid out as a molfile and redrawn as the molecule a chemist draws (drawn.cjs), the one
// every search uses, and that drawn; computed for each depiction, never stored.
// Requests: {inchi} → {svg} | {error}; {inchi, molfile: true} → {molfile} | {error}, the molecule drawn.
// Plain JavaScript on purpose: a worker is started with `node`, without the TypeScript loader.
const { parentPort } = require('node:worker_threads');
const initIndigo = require('indigo-ketcher');
const { drawnMolfile, readInchi, eitherCisOrTrans } = require('./drawn.cjs');

const ready = initIndigo();

/**
 * The molfile to draw: the InChI's molecule laid out in 2D (its wedges keep its stereo), with its
 * hydrogens moved; or, when Indigo cannot lay it out, the InChI itself (its depiction then fails
 * or succeeds as it always did).
 */
function drawn(indigo, inchi) {
  const options = new indigo.MapStringString();
  try {
    options.set('input-format', 'inchi');
    const { result, withoutStereo } = readInchi((text) => indigo.layout(text, 'molfile', options), inchi);
    const molfile = drawnMolfile(result, inchi).molfile;
    return { structure: withoutStereo ? eitherCisOrTrans(molfile, inchi) : molfile, format: 'molfile' };
  } catch {
    return { structure: inchi, format: 'inchi' };
  } finally {
    options.delete();
  }
}

parentPort.on('message', async ({ id, request }) => {
  try {
    const indigo = await ready;
    const { structure, format } = drawn(indigo, request.inchi);
    if (request.molfile) {
      parentPort.postMessage({ id, result: format === 'molfile' ? { molfile: structure } : { error: 'no layout' } });
      return;
    }
    const options = new indigo.MapStringString();
    options.set('render-output-format', 'svg');
    options.set('input-format', format);
    options.set('render-coloring', 'true');
    // Every stereo structure of a Standard InChI is absolute (/s1): Indigo's "Chiral" label would only repeat it.
    options.set('render-stereo-style', 'none');
    // Bonds of 50 px, so that the SVG's own size is one to show it at (a page scales it down, never
    // up: chemxref.css); bonds and labels half as thick again as Indigo's default, so that a drug-sized
    // molecule scaled into a thumbnail of the pages' grids (about 300 px wide) keeps legible labels.
    options.set('render-bond-length', '50');
    options.set('render-relative-thickness', '1.5');
    const encoded = indigo.render(structure, options);
    options.delete();
    parentPort.postMessage({ id, result: { svg: Buffer.from(encoded, 'base64').toString('utf8') } });
  } catch (error) {
    parentPort.postMessage({ id, result: { error: error && error.message ? error.message : String(error) } });
  }
});
