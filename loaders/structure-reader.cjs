// Worker thread entry of loaders/structure-reader.ts: the TypeScript loader first (the npm scripts
// run the loaders through tsx, whose hooks a worker does not inherit), then the reader itself.
require('tsx/cjs');
require('./structure-reader.ts').readInWorker();
