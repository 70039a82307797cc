import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import en from '../../i18n/en';
import zh from '../../i18n/zh';
import type { CatalogEntry, DatasetSummary } from '../../api/types';
import { indexCatalog } from '../catalog/catalogIndex';
import type { DatasetPublic } from '../datasets/api';
import {
  datasetFacts,
  datasetInputType,
  countedSamples,
  countedWithClasses,
  countTitle,
  datasetNote,
  datasetSummary,
  edgeLabel,
  GenericPredict,
  GenericPreview,
  INPUT_VIEWS,
  modelInputType,
  predictOf,
  previewOf,
} from './registry';
import { inputsMessages } from './messages';
import { datasetsMessages } from '../datasets/messages';

async function translator(lng: string): Promise<TFunction> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: {
      en: { translation: { ...en, ...datasetsMessages.en, ...inputsMessages.en } },
      zh: { translation: { ...zh, ...datasetsMessages.zh, ...inputsMessages.zh } },
    },
    lng,
    interpolation: { escapeValue: false },
  });
  return i18n.t.bind(i18n) as TFunction;
}

const dataset = (extra: Partial<DatasetPublic> & Record<string, unknown>): DatasetPublic =>
  ({
    id: 'd',
    name: 'd',
    kind: 'folder',
    count: 120,
    channels: 1,
    size: [28, 28],
    size_stats: null,
    classes: [],
    columns: null,
    size_bytes: 0,
    created_at: '2026-01-01T00:00:00Z',
    node: { type: 'dataset.uploaded', params: { dataset_id: 'd' } },
    ...extra,
  }) as DatasetPublic;

describe('the input type registry', () => {
  it('words each type’s edge label in the reader’s language, and any other shape with times signs', async () => {
    const t = { en: await translator('en'), zh: await translator('zh') };
    expect(edgeLabel('64 x 1 seq', t.en)).toBe('64 × 1 seq');
    expect(edgeLabel('? x 3 seq', t.zh)).toBe('? × 3 序列');
    expect(edgeLabel('13 features', t.zh)).toBe('13 个特征');
    expect(edgeLabel('1 feature', t.en)).toBe('1 feature');
    expect(edgeLabel('16x28x28', t.zh)).toBe('16×28×28');
    expect(edgeLabel('13 featuresx', t.zh)).toBe('13 featuresx');
  });

  it('gives a type without an entry the generic views', () => {
    expect(previewOf('points')).toBe(GenericPreview);
    expect(predictOf('points')).toBe(GenericPredict);
    expect(previewOf(null)).toBe(GenericPreview);
    for (const [name, view] of Object.entries(INPUT_VIEWS)) {
      expect(previewOf(name), name).toBe(view.Preview);
      expect(predictOf(name), name).toBe(view.Predict);
    }
  });

  it('reads a dataset’s type from the server, else from its node’s output port in the catalog', () => {
    const entry = {
      type: 'dataset.sequence',
      outputs: [{ name: 'out', types: ['sequence'] }],
    } as unknown as CatalogEntry;
    const catalog = indexCatalog([entry]);
    expect(datasetInputType(dataset({ input_type: 'points' }), catalog)).toBe('points');
    expect(datasetInputType(dataset({ node: { type: 'dataset.sequence' } }), catalog)).toBe('sequence');
    // Older servers' datasets, whose node the catalog does not know: a table has columns.
    expect(datasetInputType(dataset({ node: { type: 'dataset.gone' }, columns: [] }), catalog)).toBe('table');
    expect(datasetInputType(dataset({ node: { type: 'dataset.gone' } }), catalog)).toBe('images');
    expect(modelInputType({ input_columns: null, input_type: 'sequence' })).toBe('sequence');
    expect(modelInputType({ input_columns: [] })).toBe('table');
  });

  it('says a sequence set’s steps and features, and the classes of a type it does not know', async () => {
    const t = await translator('en');
    const sequence = {
      format: 'ts' as const,
      features: 3,
      length: { min: 20, max: 40, mean: 30 },
      equal_length: false,
      test_count: null,
      targets: null,
    };
    expect(datasetFacts(dataset({ sequence }), 'sequence', t, 'en')).toBe('20–40 steps × 3 features');
    const classes = [
      { index: 0, name: 'a', count: 1 },
      { index: 1, name: 'b', count: 1 },
    ];
    expect(datasetFacts(dataset({ classes }), 'points', t, 'en')).toBe('2 classes');
    const univariate = { ...sequence, features: 1, length: { min: 50, max: 50, mean: 50 } };
    expect(datasetFacts(dataset({ sequence: univariate }), 'sequence', t, 'en')).toBe('50 steps × 1 feature');
    expect(datasetNote(dataset({ sequence: univariate, count: 1 }), 'sequence', t, 'en')).toBe(
      '1 sequence · 50 steps × 1 feature',
    );
    expect(datasetNote(dataset({ sequence }), 'sequence', await translator('zh'), 'zh')).toBe(
      '120 个序列 · 20–40 步 × 3 个特征',
    );
  });

  it('counts a validated dataset’s samples by its type for the Train dialog', async () => {
    const t = { en: await translator('en'), zh: await translator('zh') };
    const summary = (extra: Partial<DatasetSummary>): DatasetSummary => ({
      classes: ['sine', 'square', 'saw'],
      count: 1500,
      channels: 0,
      size: null,
      ...extra,
    });
    expect(countedWithClasses(summary({ input_type: 'sequence' }), t.en, 'en')).toBe('1,500 sequences · 3 classes');
    expect(countedWithClasses(summary({ input_type: 'sequence' }), t.zh, 'zh')).toBe('1,500 个序列 · 3 个类别');
    expect(countedWithClasses(summary({ input_type: 'images', count: 5000 }), t.zh, 'zh')).toBe(
      '5,000 张图像 · 3 个类别',
    );
    expect(countedWithClasses(summary({ input_type: 'sequence', classes: [] }), t.en, 'en')).toBe('1,500 sequences');
  });

  it('words what validation read of a dataset by its input type, in both languages', async () => {
    const t = { en: await translator('en'), zh: await translator('zh') };
    const summary = (extra: Partial<DatasetSummary>): DatasetSummary => ({
      classes: ['up', 'down'],
      count: 1200,
      channels: 0,
      size: null,
      ...extra,
    });
    const varying = summary({ input_type: 'sequence', shape: [null, 3] });
    expect(datasetSummary(varying, t.en, 'en')).toBe('1,200 sequences · 2 classes · ? steps × 3 features');
    expect(datasetSummary(varying, t.zh, 'zh')).toBe('1,200 个序列 · 2 个类别 · ? 步 × 3 个特征');
    const values = summary({ input_type: 'sequence', shape: [28, 28], classes: [] });
    expect(datasetSummary(values, t.en, 'en')).toBe('1,200 sequences · 28 steps × 28 features');
    const one = summary({ input_type: 'sequence', shape: [64, 1] });
    expect(datasetSummary(one, t.en, 'en')).toBe('1,200 sequences · 2 classes · 64 steps × 1 feature');
    const images = summary({ input_type: 'images', channels: 1, size: '28x28', shape: [1, 28, 28] });
    expect(datasetSummary(images, t.en, 'en')).toBe('1,200 images · 2 classes · 1 channel(s) · 28×28');
    const points = summary({ input_type: 'points', shape: [1024, 3] });
    expect(datasetSummary(points, t.en, 'en')).toBe('1,200 samples · 2 classes · 1024×3 each');
  });

  it('titles the count column by the input types listed, and words a count as its type does', async () => {
    const t = { en: await translator('en'), zh: await translator('zh') };
    expect(countTitle(['sequence', 'sequence'], t.en)).toBe('Sequences');
    expect(countTitle(['images', 'table', 'images'], t.en)).toBe('Images / Rows');
    expect(countTitle(['sequence'], t.zh)).toBe('序列数');
    expect(countTitle(['points'], t.en)).toBe('Samples');
    expect(countedSamples('sequence', 1200, t.en, 'en')).toBe('1,200 sequences');
    expect(countedSamples('table', 1, t.en, 'en')).toBe('1 row');
    expect(countedSamples('images', 120, t.zh, 'zh')).toBe('120 张图像');
    expect(countedSamples('points', 3, t.en, 'en')).toBe('3 samples');
  });
});
