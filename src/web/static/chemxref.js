// Copy buttons of the compound page: shown only when the browser can copy (the page works without this).
document.addEventListener('DOMContentLoaded', () => {
  if (!navigator.clipboard) return;
  for (const button of document.querySelectorAll('button.copy')) {
    button.hidden = false;
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(button.dataset.copy).then(
        () => {
          const label = button.textContent;
          button.textContent = 'Copied';
          setTimeout(() => {
            button.textContent = label;
          }, 1500);
        },
        () => {
          button.textContent = 'Copy failed';
        },
      );
    });
  }
});

// The structure editor of the search page: JSME in a frame of its own (/editor), loaded only with
// JavaScript (the form below it takes a typed SMILES without). Each drawing fills the SMILES field;
// a SMILES typed there is drawn.
document.addEventListener('DOMContentLoaded', () => {
  const frame = document.querySelector('iframe.editor');
  const field = document.getElementById('drawn');
  if (!frame || !field) return;
  const draw = (smiles) => frame.contentWindow.postMessage({ draw: smiles }, window.location.origin);
  window.addEventListener('message', (event) => {
    if (
      event.source !== frame.contentWindow ||
      event.origin !== window.location.origin ||
      !event.data ||
      !event.data.chemxrefEditor
    )
      return;
    if (event.data.ready) {
      frame.dataset.ready = 'true';
      if (field.value.trim() !== '') draw(field.value.trim());
    }
    if (typeof event.data.smiles === 'string') field.value = event.data.smiles;
  });
  field.addEventListener('change', () => draw(field.value.trim()));
  frame.src = '/editor';
  frame.hidden = false;
});
