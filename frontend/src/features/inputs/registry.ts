// What the web UI shows of each input type, keyed by the type's name (the port type its data travels
// on: DatasetPublic.input_type, ModelPublic.input_type, the dataset node's output). The only place of
// the web UI that names input types: a type without an entry, or without one of its parts, gets the
// generic part (counts and classes; a file upload for prediction; the server's own edge label).
// The components are lazy: each loads with the first preview or prediction page of its type.
import { lazy, type ComponentType } from 'react';
import type { TFunction } from 'i18next';
import type { DatasetSummary } from '../../api/types';
import type { CatalogIndex } from '../catalog/catalogIndex';
import type { DatasetPublic } from '../datasets/api';
import type { ModelPublic } from '../models/api';
import { prettyShape } from '../editor/logic/summary';
import type { InputView, PredictProps, PreviewProps } from './types';

const ImagePreview = lazy(() => import('../datasets/previews/ImagePreview'));
const TablePreview = lazy(() => import('../datasets/previews/TablePreview'));
const SequencePreview = lazy(() => import('../datasets/previews/SequencePreview'));
export const GenericPreview = lazy(() => import('../datasets/previews/GenericPreview'));
const ImagePredict = lazy(() => import('../models/predict/ImagePredict'));
const TablePredict = lazy(() => import('../models/TablePredict'));
const SequencePredict = lazy(() => import('../models/predict/SequencePredict'));
export const GenericPredict = lazy(() => import('../models/predict/GenericPredict'));

const FEATURES = /^(\d+) features?$/;
const SEQUENCE = /^([\d?]+) x ([\d?]+) seq$/;
const count = (language: string, value: number) => value.toLocaleString(language);

export const INPUT_VIEWS: Readonly<Record<string, InputView>> = {
  images: {
    Preview: ImagePreview,
    Predict: ImagePredict,
    countTitle: (t) => t('inputs.countImages'),
    counted: (n, t, language) => t('inputs.countedImages', { count: n, samples: count(language, n) }),
    facts: (dataset, t) => {
      const size = dataset.size
        ? `${dataset.size[0]}×${dataset.size[1]}`
        : dataset.size_stats
          ? `${dataset.size_stats.min[0]}×${dataset.size_stats.min[1]} … ${dataset.size_stats.max[0]}×${dataset.size_stats.max[1]}`
          : '—';
      return `${t(dataset.channels === 1 ? 'datasets.gray' : 'datasets.rgb')} · ${size}`;
    },
    note: (dataset, t, language) =>
      t('props.datasetOption', {
        images: count(language, dataset.count),
        classes: dataset.classes.length,
        kind: t(`datasets.kind.${dataset.kind}`),
      }),
    summary: (dataset, t, language) =>
      t('props.datasetSummary', {
        images: count(language, dataset.count),
        classes: dataset.classes.length,
        channels: dataset.channels,
        size: dataset.size ? prettyShape(dataset.size) : t('props.sizeVaries'),
      }),
  },
  table: {
    Preview: TablePreview,
    Predict: TablePredict,
    countTitle: (t) => t('inputs.countRows'),
    counted: (n, t, language) => t('inputs.countedRows', { count: n, samples: count(language, n) }),
    edgeLabel: (shape, t) => {
      const match = FEATURES.exec(shape);
      return match ? t('shape.features', { count: Number(match[1]) }) : null;
    },
    facts: (dataset, t) => t('datasets.tableShape', { count: dataset.columns?.length ?? 0 }),
    note: (dataset, t, language) =>
      t('props.datasetTableOption', { rows: count(language, dataset.count), columns: dataset.columns?.length ?? 0 }),
  },
  sequence: {
    Preview: SequencePreview,
    Predict: SequencePredict,
    countTitle: (t) => t('inputs.sequences'),
    counted: (n, t, language) => t('inputs.countedSequences', { count: n, samples: count(language, n) }),
    edgeLabel: (shape, t) => {
      const match = SEQUENCE.exec(shape);
      return match ? t('shape.sequence', { steps: match[1], features: match[2] }) : null;
    },
    facts: (dataset, t) => t('inputs.sequenceFacts', sequenceFacts(dataset)),
    note: (dataset, t, language) =>
      `${t('inputs.countedSequences', { count: dataset.count, samples: count(language, dataset.count) })} · ${t(
        'inputs.sequenceFacts',
        sequenceFacts(dataset),
      )}`,
    summary: (dataset, t, language) => {
      const [steps, features] = dataset.shape ?? [];
      const shape = t('inputs.sequenceShape', { count: features ?? 2, steps: steps ?? '?', features: features ?? '?' });
      return t(dataset.classes.length ? 'inputs.sequenceSummary' : 'inputs.sequenceValuesSummary', {
        count: dataset.count,
        samples: count(language, dataset.count),
        classes: dataset.classes.length,
        shape,
      });
    },
  },
};

/** The view parts of input type `name` (none for a type without an entry). */
export function inputView(name: string | null | undefined): InputView {
  return (name && INPUT_VIEWS[name]) || {};
}

export function previewOf(name: string | null | undefined): ComponentType<PreviewProps> {
  return inputView(name).Preview ?? GenericPreview;
}

export function predictOf(name: string | null | undefined): ComponentType<PredictProps> {
  return inputView(name).Predict ?? GenericPredict;
}

/** A shape as the canvas prints it, in the reader's language: each type words its own form again,
 * others get "16x28x28" as "16×28×28". */
export function edgeLabel(shape: string, t: TFunction): string {
  for (const view of Object.values(INPUT_VIEWS)) {
    const label = view.edgeLabel?.(shape, t);
    if (label) return label;
  }
  return prettyShape(shape);
}

/** A dataset's input type: as the server says it, else the port its dataset node outputs (the
 * catalog's), else what older servers' datasets are (a table when it has columns, else images). */
export function datasetInputType(
  dataset: Pick<DatasetPublic, 'columns' | 'node'> & { input_type?: string | null },
  catalog?: CatalogIndex,
): string {
  if (dataset.input_type) return dataset.input_type;
  const nodeType = typeof dataset.node.type === 'string' ? dataset.node.type : '';
  const port = catalog?.byType.get(nodeType)?.outputs[0]?.types[0];
  if (port) return port;
  return dataset.columns ? 'table' : 'images';
}

/** A model's input type: as the server says it, else what models of older servers are. */
export function modelInputType(model: Pick<ModelPublic, 'input_columns'> & { input_type?: string | null }): string {
  return model.input_type || (model.input_columns ? 'table' : 'images');
}

/** One line of a dataset's format (the datasets list): its type's own, else its classes. */
export function datasetFacts(dataset: DatasetPublic, type: string, t: TFunction, language: string): string {
  const own = inputView(type).facts;
  return own ? own(dataset, t, language) : t('inputs.genericFacts', { count: dataset.classes.length });
}

/** The title of a column counting the samples of datasets of `types` (the datasets list): each type's
 * word once, "Images / Rows" for a list of images and tables. */
export function countTitle(types: readonly string[], t: TFunction): string {
  const titles = [...new Set(types)].map((type) => inputView(type).countTitle?.(t) ?? t('inputs.countSamples'));
  return [...new Set(titles)].join(' / ') || t('inputs.countSamples');
}

/** A count of a dataset's samples in words, as its type says it ("1,200 sequences"). */
export function countedSamples(type: string, n: number, t: TFunction, language: string): string {
  const own = inputView(type).counted;
  return own ? own(n, t, language) : t('inputs.countedSamples', { count: n, samples: count(language, n) });
}

/** What validation read of a dataset, in one line: its type's words, else its count, classes and one
 * sample's shape. */
export function datasetSummary(dataset: DatasetSummary, t: TFunction, language: string): string {
  const own = inputView(dataset.input_type).summary;
  if (own) return own(dataset, t, language);
  return t('inputs.genericSummary', {
    samples: count(language, dataset.count),
    classes: dataset.classes.length,
    shape: dataset.shape ? dataset.shape.map((dim) => dim ?? '?').join('×') : '?',
  });
}

/** A validated dataset's samples and classes, as its type counts them ("1,500 sequences · 3 classes"). */
export function countedWithClasses(dataset: DatasetSummary, t: TFunction, language: string): string {
  // Older servers name no type: their summaries are of images or (with columns) tables.
  const type = dataset.input_type || (dataset.columns ? 'table' : 'images');
  const samples = countedSamples(type, dataset.count, t, language);
  const classes = dataset.classes.length;
  return classes ? `${samples} · ${t('inputs.genericFacts', { count: classes })}` : samples;
}

/** The dataset picker's note for a chosen dataset. */
export function datasetNote(dataset: DatasetPublic, type: string, t: TFunction, language: string): string {
  const own = inputView(type).note;
  return own ? own(dataset, t, language) : datasetFacts(dataset, type, t, language);
}

/** A sequence set's steps (a range when lengths vary) and features, as its upload's description says. */
function sequenceFacts(dataset: DatasetPublic): { steps: string; features: number | string; count: number } {
  const described = (dataset as { sequence?: SequenceSummary | null }).sequence;
  const length = described?.length;
  const steps = !length ? '?' : length.min === length.max ? String(length.min) : `${length.min}–${length.max}`;
  // `count` picks the plural of 'feature' (an unknown count reads as several).
  return { steps, features: described?.features ?? '?', count: described?.features ?? 2 };
}

/** What an uploaded sequence set's description says of its series (server: inputs/sequence_upload.py). */
export interface SequenceSummary {
  features: number;
  length: { min: number; max: number; mean: number };
  equal_length: boolean;
  test_count: number | null;
  targets: { min: number; max: number; mean: number; std: number } | null;
}
