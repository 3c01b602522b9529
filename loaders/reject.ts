/** A row that breaks a loading rule: a short code for the summary and words for the rejects file. */
export class Reject {
  constructor(readonly code: string, readonly message: string) {}
}
