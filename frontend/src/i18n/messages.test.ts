import { describe, expect, it } from 'vitest';
import en from './en';
import zh from './zh';

function keys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([key, child]) => keys(child, prefix ? `${prefix}.${key}` : key));
}

function placeholders(value: unknown): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (node: unknown, path: string) => {
    if (typeof node === 'string') found.set(path, [...node.matchAll(/{{(\w+)}}/g)].map((m) => m[1]!).sort());
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(value, '');
  return found;
}

describe('translations', () => {
  it('Chinese has every English string', () => {
    expect(keys(zh).sort()).toEqual(keys(en).sort());
  });

  it('use the same placeholders in both languages', () => {
    const zhPlaceholders = placeholders(zh);
    for (const [path, names] of placeholders(en)) expect(zhPlaceholders.get(path), path).toEqual(names);
  });

  it('say rows without a target are left out of training, not deleted', () => {
    // The file keeps them: 已删除 (deleted) read as if the upload had been changed.
    for (const text of [zh.props.tableMissingTargets_one, zh.props.tableMissingTargets_other]) {
      expect(text).not.toContain('删除');
      expect(text).toContain('训练');
    }
  });
});
