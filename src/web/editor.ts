/**
 * The structure editor of the search page: JSME (jsme-editor, BSD-3-Clause), served from this
 * service under /static/jsme/ (no other site is asked for anything), in a frame of its own, `/editor`.
 *
 * JSME is GWT-compiled: its loader installs its code as inline scripts (`eval("…")` in Chromium)
 * in an iframe it creates, which the Content-Security-Policy of every other page forbids. So the
 * frame document alone gets a policy allowing inline scripts and eval: it is a fixed document that
 * holds no text from a request, so nothing can be injected into it. (A sandboxed frame, with an
 * opaque origin, would be narrower still, but JSME's loader must write into the iframe it creates,
 * which a sandboxed document may not.) It hands the drawn SMILES to the page by postMessage
 * (src/web/static/editor-frame.js, chemxref.js).
 */
import { dirname } from 'node:path';
import express, { type RequestHandler } from 'express';

/** The folder of the jsme-editor package: its loader, compiled permutations, fragments, styles and images. */
export const jsmeDir = dirname(require.resolve('jsme-editor/package.json'));

/**
 * The frame's policy. Inline scripts and eval are JSME's loader's; inline styles are the style
 * attributes of its widgets' HTML; everything is still loaded from this service only.
 */
const editorPolicy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'self'",
].join('; ');

const editorDocument = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Structure editor</title>
<link rel="stylesheet" href="/static/editor-frame.css">
<script src="/static/editor-frame.js"></script>
<script src="/static/jsme/jsme.nocache.js"></script>
</head>
<body>
<div id="sketch"></div>
</body>
</html>
`;

/** GET /editor: the frame the search page shows the editor in. */
export const editorFrame: RequestHandler = (_req, res) => {
  res.setHeader('Content-Security-Policy', editorPolicy);
  res.type('html').setHeader('Cache-Control', 'no-cache');
  res.send(editorDocument);
};

const jsmeStatic = express.static(jsmeDir, {
  index: false,
  dotfiles: 'deny',
  fallthrough: true,
  setHeaders: (res, path) => {
    res.setHeader('Cache-Control', /\.cache\.[a-z]+$/.test(path) ? 'public, max-age=86400' : 'no-cache');
  },
});

/**
 * GET /static/jsme/*: JSME's scripts, styles and images (not the rest of its package). The compiled
 * code's names hold their content's hash (`*.cache.*`), so they are kept a day; its loader
 * (`jsme.nocache.js`) is asked again each time.
 */
export const jsmeFiles: RequestHandler = (req, res, next) => {
  if (!/\.(js|css|png|gif)$/.test(req.path)) return next();
  jsmeStatic(req, res, next);
};
