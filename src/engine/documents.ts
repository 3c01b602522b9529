/** The documents chemxref keeps in Elasticsearch, in the field's words (docs/data-model.md). */
import type { FullInchiLayers } from '../chemistry';

/** One structure: a Standard InChI with its key and its stable UCI. `_id` in the engine is the key. */
export interface CompoundDocument {
  uci: number;
  standardInchiKey: string;
  connectivityBlock: string;
  standardInchi: string;
  layers: FullInchiLayers;
  componentCount: number;
  /** Only for multi-component structures: one entry per component, in InChI order. */
  components?: { connectivityBlock: string; standardInchi: string; formula: string }[];
  /** The load that created the structure (for tracing leftovers of a killed load). */
  loadId?: string;
}

/** One assignment (cross-reference): (sourceId, compoundId) → uci, current (1) or obsolete (0). */
export interface AssignmentDocument {
  sourceId: number;
  compoundId: string;
  uci: number;
  assignment: 0 | 1;
  auxSrc?: string | null;
  standardInchiKey: string;
  connectivityBlock: string;
}

/** A source database's metadata (docs/data-model.md), with the exact count of structures it currently holds. */
export interface SourceDocument {
  sourceID: number;
  name: string;
  nameLabel: string | null;
  nameLong: string | null;
  description: string | null;
  srcUrl: string | null;
  baseIdUrl: string | null;
  baseIdUrlAvailable: boolean;
  auxForUrl: boolean;
  srcDetails: string | null;
  srcReleaseNumber: string | null;
  srcReleaseDate: string | null;
  created: string | null;
  lastUpdated: string | null;
  updateComments: string | null;
  private: boolean;
  UCICount: number;
  retired?: boolean;
  /** The source's compound ids are names (aspirin, acetylsalicylic acid): name searches read them. */
  idsAreNames?: boolean;
}

/** The record of one `npm run load` run, kept in the meta index. */
export interface LoadRecord {
  kind: 'load';
  loadId: string;
  command: string;
  file: string | null;
  sourceId?: number | null;
  /** The sources a reference table's load replaced (a `source` load names its one in sourceId). */
  sourceIds?: number[];
  index?: string | null;
  /** The release a source load published (srcReleaseNumber and srcReleaseDate of the source). */
  releaseNumber?: string;
  releaseDate?: string;
  status: 'running' | 'done' | 'failed' | 'refused';
  dryRun: boolean;
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
  /** Of a reference table's (or dump's) load: the assignments it wrote for each source, by source id. */
  rowsLoadedBySource?: Record<string, number>;
  rejectsByReason: Record<string, number>;
  started: string;
  /** Last progress report of a running load; a running load silent for long was killed. */
  heartbeat: string;
  ended: string | null;
  seconds: number | null;
  message?: string | null;
  /** Machine and process of the load: on that machine a dead process marks the load interrupted at once. */
  host?: string;
  pid?: number;
  /**
   * The load recorded what it changed in its sources' current assignments in the changes index (loads of older versions
   * did not).
   */
  changesRecorded?: boolean;
}
