/** Limits of the engine that several reads respect. */

/** The most hits one search returns (the engine's index.max_result_window). */
export const maxResultWindow = 10_000;
