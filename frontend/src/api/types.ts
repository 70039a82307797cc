// Shapes of the JSON the server sends where its OpenAPI schema says only `object`
// (the catalog and validation routes return plain dicts). They mirror
// src/dragdl/engine/nodes/registry.py, graph/spec.py and graph/errors.py.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type Category = 'dataset' | 'op' | 'layer' | 'model' | 'train';
export const CATEGORIES: readonly Category[] = ['dataset', 'op', 'layer', 'model', 'train'];

export interface PortSpec {
  name: string;
  /** Accepted types on an input; on an output the first one is the type produced. */
  types: string[];
  multiple: boolean;
  label: string;
}

/** A (sub)schema as Pydantic writes it; only the keywords the forms read are listed. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: JsonValue;
  enum?: JsonValue[];
  const?: JsonValue;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  readOnly?: boolean;
  /** Labels of `enum`, in the catalog's language (same order). */
  'x-enum-labels'?: string[];
  /** The field applies only while each named param has one of the listed values. */
  'x-show-if'?: Record<string, JsonValue[]>;
  /** The field applies only while each named param is above the number given. */
  'x-show-above'?: Record<string, number>;
  /** The field cannot be changed here: it acts as `value`, for `reason`. */
  'x-locked'?: { value: JsonValue; reason: string };
}

export interface CatalogEntry {
  type: string;
  category: Category;
  title: string;
  description: string;
  inputs: PortSpec[];
  outputs: PortSpec[];
  random: boolean;
  params_schema: JsonSchema;
  /** Train nodes only: the name of the task kind the node trains (one of the catalog's task_kinds). */
  task?: string | null;
}

/** One metric of a task kind as the catalog describes it (the engine's MetricSpec). */
export interface MetricDescriptor {
  key: string;
  label: string;
  format: 'percent' | 'number';
  unit?: string | null;
  higher_is_better: boolean;
  charted: boolean;
}

/** A task kind's presentation (GET /api/catalog's task_kinds). */
export interface TaskKindEntry {
  name: string;
  title: string;
  metrics: MetricDescriptor[];
  headline: string;
  ranks_classes: boolean;
  answer_schema: JsonObject;
}

export interface GraphNodeSpec {
  id: string;
  type: string;
  params?: JsonObject;
  position?: { x: number; y: number } | null;
  label?: string | null;
}

export interface GraphEdgeSpec {
  id?: string | null;
  source: string;
  target: string;
  sourceHandle?: string | null;
  targetHandle?: string | null;
}

import type { SearchSection } from '../features/editor/logic/search';

export interface GraphSpec {
  version: 1;
  name: string;
  description?: string;
  nodes: GraphNodeSpec[];
  edges: GraphEdgeSpec[];
  /** Params a sweep searches: node id -> param -> range or choices (engine/graph/search.py). */
  search?: SearchSection | null;
}

export interface GraphError {
  code: string;
  message: string;
  node_id: string | null;
  field: string | null;
  details: Record<string, unknown>;
  /** A warning leaves the graph valid (a classifier on a measurement); absent: an error. */
  severity?: 'error' | 'warning';
}

/** A table column as the server describes it (engine/data/tables.py ColumnInfo). */
export interface ColumnInfo {
  name: string;
  kind: 'number' | 'category';
  missing: number;
  /** The known values of a category column, sorted; empty for numbers. */
  categories: string[];
}

export interface DatasetSummary {
  /** The dataset's input type (images, table, sequence): its port type. */
  input_type?: string;
  classes: string[];
  count: number;
  channels: number;
  size: string | null;
  /** One sample's shape as the dataset node outputs it, (T, F) for sequences; null where a dimension varies. */
  shape?: (number | null)[] | null;
  /** One sample in (English) words, as its input type says it: "28 steps x 28 features". */
  sample?: string | null;
  /** What `count` counts (English): images, rows, sequences. */
  samples_name?: string;
  /** Tables only: the input columns (without the target) and the target column. */
  columns?: ColumnInfo[] | null;
  target?: string | null;
  /** Tables only: rows left out because their target is empty (`count` is without them). */
  missing_targets?: number;
  /** The first of those rows, numbered as in the file. */
  missing_target_rows?: number[];
}

export interface ValidationResult {
  ok: boolean;
  errors: GraphError[];
  shapes: Record<string, string>;
  dataset: DatasetSummary | null;
  model_inputs: Record<string, unknown>;
  /** The train node's task kind ("classification", "regression"); null without a train node. */
  task?: string | null;
}
