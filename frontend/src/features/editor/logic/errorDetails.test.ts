// Every validation error code in both languages, with the details the engine really sends: what
// the English names (a column, "did you mean", the columns, rows and counts) the Chinese names too.
import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import type { GraphError } from '../../../api/types';
import en from '../../../i18n/en';
import zhMessages from '../../../i18n/zh';
import { errorText } from './errorMessage';
import { messageDetails, shownValues } from './errorDetails';

type Sample = [code: string, message: string, details?: Record<string, unknown>];

// The engine's sentences (engine/analysis, engine/data, engine/nodes, engine/tasks, server services).
const SAMPLES: Sample[] = [
  [
    'graph_too_large',
    'the graph is 1100000 bytes of JSON, above the limit of 1048576',
    { limit: 1048576, size: 1100000 },
  ],
  ['value_too_long', 'params.formula: 12000 characters is above the limit of 10000', { limit: 10000, length: 12000 }],
  ['resources_over_cap', 'train asks for 12 CPUs and GPUs per task, above your cap of 8', { requested: 12, cap: 8 }],
  [
    'workers_exceed_cluster',
    'Workers: 6 asked, but the nodes of the cluster hold at most 4',
    { requested: 6, largest: 4 },
  ],
  [
    'resources_exceed_nodes',
    'train asks for 64 CPUs, more than any node of the cluster has (at most 16)',
    { requested: 64, largest: 16 },
  ],
  ['infrastructure_failed', 'the Ray worker died; the task resumes from its newest checkpoint'],
  ['worker_lost', 'the worker process was lost; the task resumes from its newest checkpoint'],
  ['unknown', 'something new went wrong at train'],
  ['schema_invalid', 'nodes.0.type: Field required', { type: 'missing' }],
  ['invalid', 'the graph is invalid'],
  ['duplicate_node_id', "two nodes have the id 'conv'"],
  ['unknown_node_type', "node 'x' has the unknown type 'layer.Conv9d'"],
  ['edge_unknown_node', "an edge points at 'ghost', which is not in the graph"],
  ['search_node_unknown', "the search names the node 'gone', which is not in the graph"],
  ['search_param_unknown', "train has no searchable param 'momentum'"],
  ['search_param_kind', "train: 'lr' is a number: search it with a range"],
  ['search_range_invalid', "train: the range of 'lr' needs low < high (got 0.1 and 0.01)"],
  ['search_value_invalid', "dropout: the value 1.5 for 'p' is above 1"],
  ['sweep_invalid', 'the sweep does not match the graph'],
  ['cycle', 'conv-1 (Conv2d) is part of a cycle'],
  ['unknown_port', "merge-1 (Add) has no port 'c'"],
  [
    'port_type_mismatch',
    'Table outputs table but Conv2d accepts images',
    { source: 'data', produced: 'table', accepted: ['images'] },
  ],
  ['duplicate_edge', 'conv-1 is connected to relu-1 twice'],
  ['too_many_inputs', 'linear-1 (Linear (Dense)) takes a single input, 2 are connected'],
  ['missing_dataset', 'the graph needs a dataset node'],
  ['missing_train', 'the graph needs a train node'],
  ['multiple_dataset', 'the graph has 2 dataset nodes; it needs exactly one'],
  ['multiple_train', 'the graph has 2 train nodes; it needs exactly one'],
  ['missing_input', 'linear-1 (Linear (Dense)) has no input connected'],
  ['unreachable', 'relu-2 (ReLU) receives nothing from the dataset node'],
  ['dangling_node', 'relu-2 (ReLU) does not lead to the train node'],
  ['pipeline_branch', 'data operators must form a chain; it branches after resize-1'],
  [
    'output_mismatch',
    "the network ends with 7 outputs at dense (Linear (Dense)), but the dataset has 10 classes: set out_features of the last Linear to 'auto'",
    { shape: '7', classes: 10 },
  ],
  ['value_output_mismatch', 'the network ends with 3 outputs, but a regressor needs 1 per sample', { shape: '3' }],
  ['too_few_classes', "the dataset has 1 class ('Adelie'); a classifier needs at least 2"],
  [
    'classes_look_like_values',
    "the target column 'body_mass_g' holds 94 distinct numbers in 342 rows: a classifier learns each number as a class of its own and cannot answer a value between them; to predict the number, use a Regressor instead",
    { column: 'body_mass_g', classes: 94, count: 342, suggest: 'regression' },
  ],
  [
    'target_not_numeric',
    "the target column 'species' holds the text 'Adelie' in row 1; a regressor needs a number in every row (use a classifier for categories)",
  ],
  ['prediction_not_finite', 'row 3: the prediction is not a finite number'],
  [
    'param_invalid',
    'Epochs must be at least 1 (got 0)',
    { type: 'greater_than_equal', title: 'Epochs', limit: 1, got: 0 },
  ],
  ['shape_mismatch', 'conv-1 (Conv2d) expects 3 channels, got 1 x 28 x 28'],
  ['shape_unknown', 'the input shape of linear-1 is unknown'],
  ['input_size_unknown', 'resnet-1 needs the image size: add a Resize before it'],
  ['weights_unavailable', "the weights of 'resnet18' are not available offline"],
  ['weights_invalid', "the weights file 'resnet18.safetensors' cannot be used"],
  ['expression_invalid', "the formula 'x +' is not complete"],
  ['dataset_invalid', 'datasets/d1/data/cat/1.png: cannot be read as an image'],
  ['dataset_path_forbidden', 'only administrators may read folders on the server'],
  ['input_shape', 'resnet-1 needs images, got 1 x 64'],
  ['input_channels', 'resnet-1 takes 1 or 3 channels, got 4'],
  ['num_classes_unknown', 'the number of classes is not known yet'],
  ['codegen_unsupported', 'lambda-1 cannot be written as code yet'],
  ['table_empty', 'no feature column reaches the network'],
  [
    'column_unknown',
    "the table has no target column 'spcies'; did you mean 'species'? (columns: 'species', 'island', 'bill_length_mm', 'sex')",
  ],
  [
    'too_many_categories',
    "column 'comment' has 118 distinct values, more than 50: it looks like free text or an identifier; drop it with Select columns, or raise 'Most categories per column'",
    { column: 'comment', count: 118 },
  ],
  ['column_kind', "column 'sex' holds categorys, not numbers", { column: 'sex', kind: 'category' }],
  ['target_missing', "the target column 'body_mass_g' is empty in row 4 (2 rows in all); every row needs a target"],
  [
    'unknown_category',
    "row 2, column 'island': 'Biscay' is not one of the values seen in training ('Biscoe', 'Dream', 'Torgersen')",
  ],
  ['value_not_numeric', "row 1, column 'bill_length_mm': 'NA' is not a number"],
  [
    'text_feature',
    "column 'sex' holds text (categories) and reached the network: add a One-hot node before the first layer, or drop the column with Select columns",
  ],
  [
    'missing_values',
    "row 4, column 'bill_length_mm' has no value (2 missing in all) and nothing fills it: add a Fill missing values (Impute) node before the network",
  ],
  // The sequence readers (engine/data/ts_format.py, sequence_files.py, sequences.py).
  ['all_missing', 'walk/3.csv: dimension 2 has no values (every step is missing)'],
  ['dataset_empty', 'gestures: no class folder holds a .csv file'],
  ['file_type', 'readings.txt: not a sequence file (send .ts, .csv, .tsv or .npy files)'],
  ['label_unknown', "Motions_TRAIN.ts, line 14: the label 'jump' is not declared in @classLabel (walk, run)"],
  [
    'labels_missing',
    'Waves_TRAIN.ts, line 6: the header declares neither @classLabel true nor @targetLabel true, so the series carry nothing to learn',
  ],
  [
    'npy_pickled',
    'X.npy: holds Python objects (a pickled array), which are never loaded; save it as numbers (np.save of a numeric array)',
  ],
  ['row_invalid', 'walk.csv, line 5: 3 values, the rows before have 4'],
  ['target_not_classes', 'this sequence set has numeric targets, not classes; train it with a regressor'],
  ['too_large', 'huge.ts, line 1000001: more than 1000000 series, the limit'],
  [
    'truncated',
    'Cut_TRAIN.ts, line 40: no label after the values (the file ends in the middle of this line: it looks truncated)',
  ],
  ['value_invalid', "walk.csv, line 3, column 2: 'abc' is not a number"],
  // The point cloud readers (engine/data/point_files.py, inputs/point_decode.py).
  ['bad_file', 'chair.off, line 3: 2 values where a vertex needs 3'],
  ['file_too_large', 'scan.ply: larger than 67,108,864 bytes'],
  ['too_many_samples', 'many.npy: 2000 clouds, more than the 1000 a request may hold'],
  // Validation's cap on the network's size (engine/analysis/size.py).
  [
    'model_too_large',
    'the network has 4,297,195,522 parameters, over the limit of 200,000,000; hidden2 (Linear (Dense)) holds 4,295,032,832 of them (99.9%): make its layers narrower',
    { requested: '4,297,195,522', limit: '200,000,000', largest: '4,295,032,832' },
  ],
  // Admission of a distributed run (server/services/admission.py).
  [
    'worker_share_too_small',
    'each worker asks for 0.5 CPUs (cpus_per_worker), less than the 1 a worker must have: a worker is a whole process whatever its share. Ask for at least 1',
    { requested: 0.5, least: 1 },
  ],
  [
    'workers_over_cap',
    'the run asks for 8 workers (workers), more than the 4 one task of yours may have: each is a process of at least 2 GB of memory. Ask for at most 4',
    { requested: 8, cap: 4 },
  ],
];

async function translators(): Promise<{ en: TFunction; zh: TFunction }> {
  const make = async (lng: string) => {
    const i18n = i18next.createInstance();
    await i18n.init({
      resources: { en: { translation: en }, zh: { translation: zhMessages } },
      lng,
      interpolation: { escapeValue: false },
    });
    return i18n.t.bind(i18n) as TFunction;
  };
  return { en: await make('en'), zh: await make('zh') };
}

const asError = ([code, message, details]: Sample): GraphError => ({
  code,
  message,
  node_id: 'n',
  field: null,
  details: details ?? {},
});

describe('validation errors in both languages', () => {
  it('have a sample here for every code the message table words', () => {
    const codes = Object.keys(en.graphError.code).sort();
    expect(SAMPLES.map(([code]) => code).sort()).toEqual(codes);
  });

  it('say in Chinese every detail the English message shows', async () => {
    const t = await translators();
    for (const sample of SAMPLES) {
      const error = asError(sample);
      const english = errorText(error, t.en, { node: 'Node', field: null }, 'en');
      const chinese = errorText(error, t.zh, { node: '节点', field: null }, 'zh');
      expect(english).toBe(sample[1]);
      for (const value of shownValues(english)) expect(chinese, `${sample[0]}: ${chinese}`).toContain(value);
    }
  });

  it('place the table details in sentences of their own, not in a list after one', async () => {
    const t = await translators();
    const words = (code: string) => {
      const sample = SAMPLES.find(([c]) => c === code)!;
      return errorText(asError(sample), t.zh, { node: '表格', field: null }, 'zh');
    };
    expect(words('column_unknown')).toBe(
      "表格：表格中没有列 'spcies'；是否要用 'species'？（表格的列：'species', 'island', 'bill_length_mm', 'sex'）",
    );
    expect(words('missing_values')).toContain("第 4 行的列 'bill_length_mm' 没有值（共缺 2 个）");
    expect(words('target_missing')).toBe("表格：目标列 'body_mass_g' 在第 4 行为空（共 2 行）");
    expect(words('text_feature')).toContain("列 'sex' 是文本");
    expect(words('too_many_categories')).toContain("列 'comment' 有 118 个不同取值，超过 50");
    expect(words('dataset_invalid')).toBe('表格的数据集无法读取：datasets/d1/data/cat/1.png');
    expect(words('port_type_mismatch')).toBe('表格不能接收连到它的表格：它只接受图像');
    expect(words('truncated')).toBe('表格：Cut_TRAIN.ts, line 40 提前结束：文件看起来被截断了');
    expect(words('value_invalid')).toBe('表格：walk.csv, line 3, column 2：有一个值不是数字，或者太大（abc）');
    for (const code of ['value_not_numeric', 'unknown_category', 'target_not_numeric']) {
      expect(words(code)).not.toMatch(/is not|holds/);
    }
  });

  it('read the values back from the engine sentences', () => {
    expect(messageDetails('column_unknown', "the table has no column 'x' (columns: 'a', 'b')")).toEqual({
      column: "'x'",
      close: '',
      columns: "'a', 'b'",
    });
    expect(shownValues("conv-1 (Conv2d) expects 3 channels, got 1 x 28 x 28 at row 12 of 'a.csv'")).toEqual([
      'a.csv',
      '3',
      '1',
      '28',
      '12',
    ]);
  });
});
