// Worker thread: SVG depictions of Standard InChIs with indigo-ketcher (WASM).
// Plain JavaScript on purpose: a worker is started with `node`, without the TypeScript loader.
const { parentPort } = require('node:worker_threads');
const initIndigo = require('indigo-ketcher');

const ready = initIndigo();

parentPort.on('message', async ({ id, request }) => {
  try {
    const indigo = await ready;
    const options = new indigo.MapStringString();
    options.set('render-output-format', 'svg');
    options.set('input-format', 'inchi');
    options.set('render-coloring', 'true');
    const encoded = indigo.render(request.inchi, options);
    options.delete();
    parentPort.postMessage({ id, result: { svg: Buffer.from(encoded, 'base64').toString('utf8') } });
  } catch (error) {
    parentPort.postMessage({ id, result: { error: error && error.message ? error.message : String(error) } });
  }
});
