/** Root hooks of `npm test`: the engine of ES_URL (one node by default) and a run prefix of its own. */
import { engineHooks } from './support/engine';

export const mochaHooks = engineHooks('chemxref-test');
