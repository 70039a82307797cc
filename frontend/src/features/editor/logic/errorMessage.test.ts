import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import en from '../../../i18n/en';
import zhMessages from '../../../i18n/zh';
import type { GraphError } from '../../../api/types';
import { errorText, problemWhere } from './errorMessage';

const epochs: GraphError = {
  code: 'param_invalid',
  message: 'Epochs must be at least 1 (got 0)',
  node_id: 'train',
  field: 'epochs',
  details: { type: 'greater_than_equal', title: 'Epochs', limit: 1, got: 0 },
};

describe('validation messages', () => {
  it('keep the server English and render Chinese from code and details, naming the field by its title', async () => {
    const i18n = i18next.createInstance();
    await i18n.init({
      resources: { en: { translation: en }, zh: { translation: zhMessages } },
      lng: 'en',
      interpolation: { escapeValue: false },
    });
    const t = i18n.t.bind(i18n) as TFunction;
    expect(errorText(epochs, t, { node: 'Train', field: 'Epochs' }, 'en')).toBe('Epochs must be at least 1 (got 0)');
    await i18n.changeLanguage('zh');
    const zh = i18n.t.bind(i18n) as TFunction;
    expect(errorText(epochs, zh, { node: '训练分类器', field: '训练轮数' }, 'zh')).toBe(
      '训练轮数不能小于 1（当前值：0）',
    );
    const missing: GraphError = {
      code: 'missing_input',
      message: 'x has no input',
      node_id: 'x',
      field: null,
      details: {},
    };
    expect(errorText(missing, zh, { node: '展平', field: null }, 'zh')).toBe('展平没有连接输入');
    const odd: GraphError = {
      code: 'brand_new_code',
      message: 'something new',
      node_id: 'x',
      field: null,
      details: {},
    };
    expect(errorText(odd, zh, { node: '展平', field: null }, 'zh')).toBe('展平有问题');
  });

  it('say in Chinese what shape a Linear got and what to add before it, as the English does', async () => {
    const i18n = i18next.createInstance();
    await i18n.init({
      resources: { zh: { translation: zhMessages } },
      lng: 'zh',
      interpolation: { escapeValue: false },
    });
    const zh = i18n.t.bind(i18n) as TFunction;
    const afterLstm: GraphError = {
      code: 'shape_mismatch',
      message:
        'Linear (Dense) expects a flat feature vector but receives 28x128 from node lstm: add a Last step or a ' +
        'Global pooling over time before it',
      node_id: 'fc',
      field: null,
      details: { input_shape: '28x128', suggest: 'pool_time' },
    };
    expect(errorText(afterLstm, zh, { node: '全连接层', field: null }, 'zh')).toBe(
      '全连接层需要每个样本一个特征向量，但收到 28×128：请在它前面加“最后一步”或“时间全局池化”',
    );
    const afterConv = { ...afterLstm, details: { input_shape: '16x14x14', suggest: 'flatten' } };
    expect(errorText(afterConv, zh, { node: '全连接层', field: null }, 'zh')).toContain('16×14×14：请在它前面加展平');
  });
});

describe('problem lines', () => {
  it('name the node once: no lead when the message names it already', () => {
    const server = 'linear-1 (Linear (Dense)) has no input connected';
    expect(problemWhere(server, 'Linear (Dense)', 'linear-1')).toBeNull();
    expect(problemWhere('展平没有连接输入', '展平', 'flatten-1')).toBeNull();
    expect(problemWhere('Epochs must be at least 1 (got 0)', 'Train', 'train-1')).toBe('Train');
    expect(problemWhere('The graph has no train node', null, null)).toBeNull();
  });
});
