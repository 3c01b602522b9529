// The structure editor's frame (/editor): JSME calls jsmeOnLoad once its code is in. The frame tells
// the search page the SMILES of each drawing, and draws a SMILES the page sends it.
// Messages go to, and are taken from, the page of this origin that holds the frame.
window.jsmeOnLoad = () => {
  const sketch = document.getElementById('sketch');
  // JSME's options: no query features (a SMILES is drawn), no reaction arrows, no links out.
  const applet = new window.JSApplet.JSME('sketch', `${sketch.clientWidth}px`, `${sketch.clientHeight}px`, {
    options: 'newlook,noquery,noreaction,nosearchinchiKey,nopaste,zoom,atommovebutton',
  });
  const tell = (message) => window.parent.postMessage({ chemxrefEditor: true, ...message }, window.location.origin);
  applet.setCallBack('AfterStructureModified', () => tell({ smiles: applet.smiles() }));
  window.addEventListener('message', (event) => {
    if (
      event.source !== window.parent ||
      event.origin !== window.location.origin ||
      !event.data ||
      typeof event.data.draw !== 'string'
    )
      return;
    if (event.data.draw === '') applet.reset();
    else applet.readGenericMolecularInput(event.data.draw);
  });
  window.addEventListener('resize', () => applet.setSize(`${sketch.clientWidth}px`, `${sketch.clientHeight}px`));
  // What the editor holds, for the browser tests.
  window.chemxrefEditor = { smiles: () => applet.smiles() };
  tell({ ready: true });
};
