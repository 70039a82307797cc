// A small catalog with the shapes of the real one (GET /api/catalog), for the unit tests.
import type { CatalogEntry, PortSpec, TaskKindEntry } from '../api/types';
import { indexCatalog } from '../features/catalog/catalogIndex';

const port = (name: string, types: string[], multiple = false): PortSpec => ({ name, types, multiple, label: name });
const IMAGES_OUT = [port('out', ['images'])];
const TENSOR_OUT = [port('out', ['tensor'])];
const LAYER_IN = [port('in', ['images', 'tensor'])];

export const ENTRIES: CatalogEntry[] = [
  {
    type: 'dataset.builtin',
    category: 'dataset',
    title: 'Built-in dataset',
    description: 'Small digit datasets.',
    inputs: [],
    outputs: IMAGES_OUT,
    random: false,
    params_schema: {
      type: 'object',
      properties: { name: { type: 'string', enum: ['mnist-5k', 'digits'], default: 'mnist-5k', title: 'Name' } },
    },
  },
  {
    type: 'op.Resize',
    category: 'op',
    title: 'Resize',
    description: 'Resize images.',
    inputs: [port('in', ['images'])],
    outputs: IMAGES_OUT,
    random: false,
    params_schema: {
      type: 'object',
      properties: {
        height: { type: 'integer', minimum: 1, maximum: 4096, default: 32, title: 'Height' },
        width: {
          anyOf: [{ type: 'integer', minimum: 1, maximum: 4096 }, { type: 'null' }],
          default: null,
          title: 'Width',
        },
      },
    },
  },
  {
    type: 'op.RandomHorizontalFlip',
    category: 'op',
    title: 'RandomHorizontalFlip',
    description: 'Flip at random.',
    inputs: [port('in', ['images'])],
    outputs: IMAGES_OUT,
    random: true,
    params_schema: { type: 'object', properties: { p: { type: 'number', minimum: 0, maximum: 1, default: 0.5 } } },
  },
  {
    type: 'layer.Conv2d',
    category: 'layer',
    title: 'Conv2d',
    description: '2-D convolution.',
    inputs: LAYER_IN,
    outputs: TENSOR_OUT,
    random: false,
    params_schema: {
      type: 'object',
      properties: {
        out_channels: { type: 'integer', minimum: 1, maximum: 4096, default: 16, title: 'Out Channels' },
        kernel_size: { type: 'integer', minimum: 1, maximum: 15, default: 3, title: 'Kernel Size' },
        padding: {
          anyOf: [{ type: 'string', enum: ['same', 'valid'] }, { type: 'integer' }],
          default: 'same',
          title: 'Padding',
        },
        bias: { type: 'boolean', default: true, title: 'Bias' },
      },
    },
  },
  {
    type: 'layer.ReLU',
    category: 'layer',
    title: 'ReLU',
    description: 'Rectifier.',
    inputs: LAYER_IN,
    outputs: TENSOR_OUT,
    random: false,
    params_schema: { type: 'object', properties: {} },
  },
  {
    type: 'layer.Add',
    category: 'layer',
    title: 'Add',
    description: 'Sum of inputs.',
    inputs: [port('in', ['images', 'tensor'], true)],
    outputs: TENSOR_OUT,
    random: false,
    params_schema: { type: 'object', properties: {} },
  },
  {
    type: 'train.Classifier',
    category: 'train',
    title: 'Train classifier',
    description: 'Training.',
    inputs: [port('in', ['tensor', 'logits'])],
    outputs: [],
    random: false,
    params_schema: {
      type: 'object',
      properties: {
        epochs: { type: 'integer', minimum: 1, default: 10, title: 'Epochs' },
        optimizer: { type: 'string', enum: ['sgd', 'adam'], default: 'adam', title: 'Optimizer' },
      },
    },
  },
];

/** The task kinds as GET /api/catalog sends them (engine/tasks/: MetricSpec, headline). */
export const TASK_KINDS: TaskKindEntry[] = [
  {
    name: 'classification',
    title: 'Classification',
    metrics: [
      { key: 'accuracy', label: 'Accuracy', format: 'percent', unit: null, higher_is_better: true, charted: true },
      {
        key: 'top5_accuracy',
        label: 'Top-5 accuracy',
        format: 'percent',
        unit: null,
        higher_is_better: true,
        charted: false,
      },
    ],
    headline: 'accuracy',
    ranks_classes: true,
    answer_schema: { type: 'object', required: ['label', 'index', 'probability', 'top_k', 'probabilities'] },
  },
  {
    name: 'regression',
    title: 'Regression',
    metrics: [
      { key: 'mae', label: 'MAE', format: 'number', unit: null, higher_is_better: false, charted: true },
      { key: 'rmse', label: 'RMSE', format: 'number', unit: null, higher_is_better: false, charted: true },
      { key: 'r2', label: 'R²', format: 'number', unit: null, higher_is_better: true, charted: true },
    ],
    headline: 'r2',
    ranks_classes: false,
    answer_schema: { type: 'object', required: ['value'] },
  },
];

export const CATALOG = indexCatalog(ENTRIES, TASK_KINDS);
