// Worker thread entry of loaders/structure-reader.ts. Built (`npm run build`), the compiled
// structure-reader.js sits beside this file; from the sources, the TypeScript loader comes first
// (the npm scripts run the loaders through tsx, whose hooks a worker does not inherit).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

if (existsSync(join(__dirname, 'structure-reader.js'))) {
  require('./structure-reader.js').readInWorker();
} else {
  require('tsx/cjs');
  require('./structure-reader.ts').readInWorker();
}
