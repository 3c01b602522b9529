// The structure editor's frame (/editor): JSME calls jsmeOnLoad once its code is in. The frame tells
// the search page the SMILES (and molfile) of each drawing made by hand, and draws what the page sends
// it: a molfile when it has one (a drawing kept as it was laid out), else its SMILES.
// Messages go to, and are taken from, the page of this origin that holds the frame.
window.jsmeOnLoad = () => {
  const sketch = document.getElementById('sketch');
  // JSME's options: no query features (a SMILES is drawn), no reaction arrows, no links out.
  const applet = new window.JSApplet.JSME('sketch', `${sketch.clientWidth}px`, `${sketch.clientHeight}px`, {
    options: 'newlook,noquery,noreaction,nosearchinchiKey,nopaste,zoom,atommovebutton',
  });
  const tell = (message) => window.parent.postMessage({ chemxrefEditor: true, ...message }, window.location.origin);
  let clearing = false;
  applet.setCallBack('AfterStructureModified', (event) => {
    // What the page sent is already in its field: only a change made by hand is told.
    if (clearing || /^read/.test(String(event.action))) return;
    tell({ smiles: applet.smiles(), molfile: applet.molFile() });
  });
  window.addEventListener('message', (event) => {
    if (
      event.source !== window.parent ||
      event.origin !== window.location.origin ||
      !event.data ||
      typeof event.data.draw !== 'string'
    )
      return;
    if (event.data.draw === '') {
      clearing = true;
      try {
        applet.reset();
      } finally {
        clearing = false;
      }
      return;
    }
    // What JSME cannot read leaves the drawing as it was; a read that throws does too.
    const before = applet.molFile();
    try {
      applet.readGenericMolecularInput(event.data.molfile || event.data.draw);
    } catch {
      applet.readMolFile(before);
    }
  });
  window.addEventListener('resize', () => applet.setSize(`${sketch.clientWidth}px`, `${sketch.clientHeight}px`));
  // What the editor holds, for the browser tests.
  window.chemxrefEditor = { smiles: () => applet.smiles() };
  tell({ ready: true });
};
