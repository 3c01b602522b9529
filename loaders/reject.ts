/** A row that breaks a loading rule: a short code for the summary and words for the rejects file. */
export class Reject {
  constructor(
    readonly code: string,
    readonly message: string,
  ) {}
}

/** Throws the Reject of a row the reader found malformed: a wrong column count, or a line that is not a JSON object. */
export function rejectMalformed(fields: Record<string, string>): void {
  if (fields.__columns) throw new Reject('wrong-column-count', fields.__columns);
  if (fields.__error) throw new Reject('bad-row', fields.__error);
}
