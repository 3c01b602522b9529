/** What can go wrong with a request, in the field's words; the API maps each to its status and shape. */

/** The request is malformed or asks something that cannot be answered (HTTP 400). */
export class InvalidQuery extends Error {
  constructor(
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** A named thing (a source, a UCI in a path) does not exist (HTTP 404). */
export class UnknownResource extends Error {}

/** A well-formed structure the toolkit read but could not turn into a Standard InChI, or not in time (HTTP 422). */
export class UnprocessableStructure extends Error {}

/**
 * What was asked is not kept any more, or was never recorded (HTTP 410): the message says what can be asked instead.
 */
export class NoLongerAvailable extends Error {}
