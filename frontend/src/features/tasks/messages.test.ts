import { describe, expect, it } from 'vitest';
import en from '../../i18n/en';
import { datasetsMessages } from '../datasets/messages';
import { modelsMessages } from '../models/messages';
import { monitorMessages } from '../monitor/messages';
import { tasksMessages } from './messages';

const FEATURES = { tasks: tasksMessages, monitor: monitorMessages, models: modelsMessages, datasets: datasetsMessages };

function keys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([key, child]) => keys(child, prefix ? `${prefix}.${key}` : key));
}

function placeholders(value: unknown): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const key of keys(value)) {
    const text = key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], value);
    found.set(key, [...String(text).matchAll(/{{(\w+)}}/g)].map((m) => m[1]!).sort());
  }
  return found;
}

describe.each(Object.entries(FEATURES))('%s messages', (name, messages) => {
  it('has every English string in Chinese, with the same placeholders', () => {
    expect(keys(messages.zh).sort()).toEqual(keys(messages.en).sort());
    const zh = placeholders(messages.zh);
    for (const [key, names] of placeholders(messages.en)) expect(zh.get(key), key).toEqual(names);
  });

  it('adds its own top-level section without touching the shared strings', () => {
    expect(Object.keys(messages.en)).toEqual([name]);
    expect(Object.keys(en)).not.toContain(name);
  });
});
