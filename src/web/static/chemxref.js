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
// a SMILES typed there is drawn as it is typed, once it reads as a whole SMILES. The field's text and
// the drawing are kept in the page's history entry, so Back and a reload show them again.
document.addEventListener('DOMContentLoaded', () => {
  const frame = document.querySelector('iframe.editor');
  const field = document.getElementById('drawn');
  if (!frame || !field) return;
  const kept = (history.state && history.state.chemxrefDrawn) || null;
  if (kept && field.value === '') field.value = kept.text;
  // The molfile of the last drawing by hand, to draw it again as it was laid out, while the field holds its SMILES.
  let drawing = kept && kept.molfile ? { smiles: kept.text, molfile: kept.molfile } : null;
  let shown = null;
  let ready = false;
  const keep = () => {
    const text = field.value;
    const molfile = drawing && drawing.smiles === text ? drawing.molfile : undefined;
    try {
      history.replaceState({ ...history.state, chemxrefDrawn: { text, molfile } }, '');
    } catch {
      // A browser that refuses (too many calls) keeps the previous state: the next change writes it again.
    }
  };
  const draw = () => {
    const text = field.value.trim();
    if (!ready || text === shown || (text !== '' && !wholeSmiles(text))) return;
    shown = text;
    const molfile = drawing && drawing.smiles === field.value ? drawing.molfile : undefined;
    frame.contentWindow.postMessage({ draw: text, molfile }, window.location.origin);
  };
  let typing;
  field.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      draw();
      keep();
    }, 250);
  });
  // A search run before the pause still leaves its text in the history entry.
  field.form.addEventListener('submit', keep);
  window.addEventListener('pagehide', keep);
  field.addEventListener('change', () => {
    clearTimeout(typing);
    draw();
    keep();
  });
  window.addEventListener('message', (event) => {
    if (
      event.source !== frame.contentWindow ||
      event.origin !== window.location.origin ||
      !event.data ||
      !event.data.chemxrefEditor
    )
      return;
    if (event.data.ready) {
      ready = true;
      shown = null;
      frame.dataset.ready = 'true';
      draw();
    }
    if (typeof event.data.smiles === 'string') {
      // Drawn by hand: the field and the history entry take the drawing.
      clearTimeout(typing);
      field.value = event.data.smiles;
      shown = event.data.smiles;
      drawing = { smiles: event.data.smiles, molfile: event.data.molfile };
      keep();
    }
  });
  frame.src = '/editor';
  frame.hidden = false;
});

const elements = new Set(
  (
    'H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr Rb Sr Y ' +
    'Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os ' +
    'Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn ' +
    'Nh Fl Mc Lv Ts Og'
  ).split(' '),
);
const bracketAtom =
  /^\[\d*(se|as|[A-Z][a-z]?|[bcnops]|\*)(@@?(TH[12]|AL[12]|SP[123]|TB\d\d?|OH\d\d?)?)?(H\d*)?([+-]\d*|\+\++|--+)?(:\d+)?\]$/;
const smilesToken = /\[[^\]]*\]|Cl|Br|[BCNOPSFI*bcnops]|%\d\d|\d|[-=#$:/\\.()]/y;

/**
 * Whether a SMILES, as typed so far, is whole: its atoms, bonds, branches and ring bonds each
 * complete and closed. JSME reads an unfinished SMILES leniently (`CC(` as ethane), which would
 * replace a good drawing with a wrong one; what it still cannot read, it leaves the drawing as it was.
 */
function wholeSmiles(text) {
  let depth = 0;
  let last = 'start';
  const rings = new Set();
  for (let at = 0; at < text.length;) {
    smilesToken.lastIndex = at;
    const found = smilesToken.exec(text);
    if (!found) return false;
    const token = found[0];
    at = smilesToken.lastIndex;
    const after = (...kinds) => kinds.includes(last);
    if (token[0] === '[') {
      const atom = bracketAtom.exec(token);
      if (!atom || !(elements.has(atom[1]) || /^(se|as|[bcnops]|\*)$/.test(atom[1]))) return false;
      last = 'atom';
    } else if (/^[A-Za-z*]/.test(token)) last = 'atom';
    else if (/^%?\d/.test(token)) {
      if (!after('atom', 'ring', 'bond')) return false;
      if (rings.has(token)) rings.delete(token);
      else rings.add(token);
      last = 'ring';
    } else if (token === '(') {
      if (!after('atom', 'ring', 'close')) return false;
      depth += 1;
      last = 'open';
    } else if (token === ')') {
      if (depth === 0 || !after('atom', 'ring', 'close')) return false;
      depth -= 1;
      last = 'close';
    } else if (token === '.') {
      if (!after('atom', 'ring', 'close')) return false;
      last = 'dot';
    } else {
      if (!after('atom', 'ring', 'open', 'close')) return false;
      last = 'bond';
    }
  }
  return depth === 0 && rings.size === 0 && ['atom', 'ring', 'close'].includes(last);
}
