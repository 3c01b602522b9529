/**
 * A string that is not a Standard InChI. The message says why in a chemist's words
 * ("not a Standard InChI: a /f (fixed-H) layer is only found in non-standard InChIs"),
 * so that callers can hand it to the user as it is.
 */
export class InchiError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InchiError';
  }
}
