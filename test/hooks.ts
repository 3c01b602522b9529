/**
 * Root hooks of `npm test` and `test:examples`: the engine of ES_URL when it is given, else one of
 * the suite's own on TEST_ES_PORT (a free port by default); a run prefix of its own.
 */
import { engineHooks } from './support/engine';

export const mochaHooks = engineHooks('chemxref-test');
