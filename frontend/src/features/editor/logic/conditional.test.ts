import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../../api/types';
import { fieldApplies, fieldsFromSchema, optionLabel } from './schemaForm';

// An excerpt of train.Classifier's params schema as GET /api/catalog?lang=zh sends it.
const TRAIN: JsonSchema = {
  type: 'object',
  properties: {
    optimizer: {
      default: 'adam',
      enum: ['sgd', 'adam', 'adamw'],
      'x-enum-labels': ['SGD', 'Adam', 'AdamW'],
      title: '优化器',
      type: 'string',
    },
    momentum: { default: 0.9, title: '动量', type: 'number', 'x-show-if': { optimizer: ['sgd'] } },
    early_stopping: { default: false, title: '提前停止', type: 'boolean' },
    patience: { default: 5, title: '耐心（轮）', type: 'integer', 'x-show-if': { early_stopping: [true] } },
    workers: { default: 1, title: '训练进程数', type: 'integer' },
    cpus_per_worker: { default: 1, title: '每个进程的 CPU 数', type: 'number', 'x-show-above': { workers: 1 } },
    download: {
      default: true,
      title: '下载',
      type: 'boolean',
      readOnly: true,
      'x-locked': { value: false, reason: '这里不允许下载：文件必须已在缓存中。' },
    },
  },
};

const visible = (params: Record<string, string | number | boolean>) => {
  const fields = fieldsFromSchema(TRAIN);
  return fields.filter((field) => fieldApplies(field, fields, params)).map((field) => field.name);
};

describe('conditional fields', () => {
  it('hide Momentum unless the optimizer is SGD, judging the default too', () => {
    expect(visible({})).not.toContain('momentum');
    expect(visible({ optimizer: 'adamw' })).not.toContain('momentum');
    expect(visible({ optimizer: 'sgd' })).toContain('momentum');
  });

  it('show the per-worker settings only for more than one worker', () => {
    expect(visible({})).not.toContain('cpus_per_worker');
    expect(visible({ workers: 1 })).not.toContain('cpus_per_worker');
    expect(visible({ workers: 2 })).toContain('cpus_per_worker');
  });

  it('show Patience only with early stopping on', () => {
    expect(visible({})).not.toContain('patience');
    expect(visible({ early_stopping: true })).toContain('patience');
  });

  it('label choices in the catalog language and carry a lock with its reason', () => {
    const fields = fieldsFromSchema(TRAIN);
    const optimizer = fields.find((field) => field.name === 'optimizer')!;
    expect(optionLabel(optimizer, 'adamw')).toBe('AdamW');
    const download = fields.find((field) => field.name === 'download')!;
    expect(download.locked).toEqual({ value: false, reason: '这里不允许下载：文件必须已在缓存中。' });
  });
});
