export type { DataEntry, DataFileError, ParseOptions, ParsedLine } from './parse.js'
export { readLayers, mergeLayers, createLayersReport } from './layers.js'
export type { LayerOp, LayerStats, LayersReport, ReadLayersOptions, MergedEntry, MergeResult } from './layers.js'
