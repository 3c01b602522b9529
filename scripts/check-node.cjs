// Run first by every npm script of package.json: chemxref needs Node.js 22 or newer, and on an older
// node (Debian's and Ubuntu's own are 18 or 20) its scripts would fail later with errors that name
// something else. Written in the JavaScript of any Node, so that the oldest still reads it.
'use strict';

var required = 22;

/** The line that refuses `version` (such as "20.20.2"), or null when it is new enough. */
function nodeVersionProblem(version, executable) {
  var major = parseInt(String(version).split('.')[0], 10);
  if (major >= required) return null;
  return (
    'chemxref needs Node.js ' +
    required +
    ' or newer, and this is Node.js ' +
    version +
    (executable ? ' (' + executable + ')' : '') +
    ': README.md, "Requirements", says how to put Node.js 24 first on PATH.'
  );
}

module.exports = { nodeVersionProblem: nodeVersionProblem };

if (require.main === module) {
  var problem = nodeVersionProblem(process.versions.node, process.execPath);
  if (problem) {
    process.stderr.write(problem + '\n');
    process.exit(1);
  }
}
