import { describe, expect, it } from 'vitest';
import { localizedTemplate, templateTextsZh } from './templateTexts';

const template = {
  id: 'mlp_breast_cancer',
  name: 'MLP (breast cancer)',
  description: 'A small multilayer perceptron on a breast cancer table.',
  graph: { version: 1 as const, name: 'MLP (breast cancer)', description: 'English', nodes: [], edges: [] },
};
// i18next's lookup, reduced to the Chinese template texts and the default value.
const zhT = (key: string, options: { defaultValue: string }) => {
  const [, id, field] = key.split('.') as [string, string, 'name' | 'description'];
  return templateTextsZh[id]?.[field] ?? options.defaultValue;
};

describe('localizedTemplate', () => {
  it('opens a template named and described in the reader language', () => {
    const graph = localizedTemplate(template, zhT);
    expect(graph.name).toBe(templateTextsZh.mlp_breast_cancer!.name);
    expect(graph.description).toBe(templateTextsZh.mlp_breast_cancer!.description);
  });

  it('keeps the English texts of a template without a translation', () => {
    const graph = localizedTemplate({ ...template, id: 'someone_elses' }, zhT);
    expect(graph).toMatchObject({ name: template.name, description: template.description });
  });
});
