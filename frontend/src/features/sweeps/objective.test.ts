import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { indexCatalog } from '../catalog/catalogIndex';
import { CATALOG, ENTRIES, TASK_KINDS } from '../../test/fixtures';
import { sweepsMessages } from './messages';
import { objectiveLabel, tooFewForImportance } from './objective';

async function translator(lng: 'en' | 'zh'): Promise<TFunction> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: { en: { translation: sweepsMessages.en }, zh: { translation: sweepsMessages.zh } },
    lng,
    interpolation: { escapeValue: false },
  });
  return i18n.t.bind(i18n) as TFunction;
}

// The catalog as a Chinese reader receives it: the server translates the metric labels.
const ZH_CATALOG = indexCatalog(
  ENTRIES,
  TASK_KINDS.map((kind) => ({
    ...kind,
    metrics: kind.metrics.map((metric) => ({
      ...metric,
      label: ({ Accuracy: '准确率', MAE: '平均绝对误差' } as Record<string, string>)[metric.label] ?? metric.label,
    })),
  })),
);

describe('objectiveLabel', () => {
  it("words a metric name from the catalog's descriptors, in English", async () => {
    const t = await translator('en');
    expect(objectiveLabel('val_r2', CATALOG, t)).toBe('Validation R²');
    expect(objectiveLabel('val_accuracy', CATALOG, t)).toBe('Validation accuracy');
    expect(objectiveLabel('val_mae', CATALOG, t)).toBe('Validation MAE');
    expect(objectiveLabel('val_loss', CATALOG, t)).toBe('Validation loss');
    expect(objectiveLabel('test_top5_accuracy', CATALOG, t)).toBe('Test top-5 accuracy');
  });

  it('and in Chinese, from the labels the catalog serves in Chinese', async () => {
    const t = await translator('zh');
    expect(objectiveLabel('val_accuracy', ZH_CATALOG, t)).toBe('验证集准确率');
    expect(objectiveLabel('val_mae', ZH_CATALOG, t)).toBe('验证集平均绝对误差');
    expect(objectiveLabel('val_loss', ZH_CATALOG, t)).toBe('验证集损失');
  });

  it('leaves a name no kind describes as it is', async () => {
    const t = await translator('en');
    expect(objectiveLabel('val_f1', CATALOG, t)).toBe('val_f1');
  });
});

describe('tooFewForImportance', () => {
  it('holds below the least count of complete trials the server names', () => {
    expect(tooFewForImportance({ importance_trials: 4, importance_min_trials: 10 })).toBe(true);
    expect(tooFewForImportance({ importance_trials: 10, importance_min_trials: 10 })).toBe(false);
    expect(tooFewForImportance({ importance_min_trials: 10 })).toBe(true);
  });
});
