// The second half of `npm run build`: what tsc does not emit, copied beside the compiled code of
// dist/, so that `node dist/src/server.js`, `node dist/loaders/cli.js` and `node dist/src/export/cli.js`
// find it where the sources have it: the OpenAPI document, the index mappings and the workers'
// plain JavaScript entries, the web pages' stylesheet and script, and the Kibana saved objects.
const { cpSync, mkdirSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const dist = join(root, 'dist');
const copies = [
  ['src/api/openapi.yaml', 'src/api/openapi.yaml'],
  ...readdirSync(join(root, 'src/toolkits'))
    .filter((name) => name.endsWith('.cjs'))
    .map((name) => [`src/toolkits/${name}`, `src/toolkits/${name}`]),
  ...readdirSync(join(root, 'loaders'))
    .filter((name) => name.endsWith('.cjs'))
    .map((name) => [`loaders/${name}`, `loaders/${name}`]),
  ['mappings', 'mappings'],
  ['kibana', 'kibana'],
  ['src/web/static', 'src/web/static'],
];
for (const [from, to] of copies) {
  mkdirSync(join(dist, to, '..'), { recursive: true });
  cpSync(join(root, from), join(dist, to), { recursive: true });
}
process.stdout.write(`dist/: compiled src/ and loaders/, and ${copies.map(([from]) => from).join(', ')}\n`);
