import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../../api/types';
import {
  defaultParams,
  describeRange,
  effectiveValue,
  fieldsFromSchema,
  formatFieldValue,
  parseFieldText,
} from './schemaForm';

// Excerpts of real params schemas (Pydantic's model_json_schema) from GET /api/catalog.
const CONV: JsonSchema = {
  type: 'object',
  required: ['path'],
  properties: {
    out_channels: {
      default: 16,
      description: 'Number of filters.',
      maximum: 4096,
      minimum: 1,
      title: 'Out Channels',
      type: 'integer',
    },
    padding: {
      anyOf: [{ enum: ['same', 'valid'], type: 'string' }, { type: 'integer' }],
      default: 'same',
      title: 'Padding',
    },
    bias: { default: true, title: 'Bias', type: 'boolean' },
    p: { default: 0.5, exclusiveMaximum: 1, minimum: 0, title: 'P', type: 'number' },
    out_features: {
      anyOf: [{ const: 'auto', type: 'string' }, { type: 'integer' }],
      default: 'auto',
      title: 'Out Features',
    },
    width: { anyOf: [{ maximum: 4096, minimum: 1, type: 'integer' }, { type: 'null' }], default: null, title: 'Width' },
    mean: {
      anyOf: [{ items: { type: 'number' }, maxItems: 3, type: 'array' }, { type: 'null' }],
      default: null,
      title: 'Mean',
    },
    categories: { items: { type: 'string', minLength: 1 }, minItems: 2, type: 'array', title: 'Categories' },
    preset: { default: 'dataset', enum: ['dataset', 'imagenet', 'custom'], title: 'Preset', type: 'string' },
    channels: { default: 1, enum: [1, 3], title: 'Channels', type: 'integer' },
    expression: { default: 'x', maxLength: 500, title: 'Expression', type: 'string' },
    path: { minLength: 1, title: 'Path', type: 'string' },
    color: { $ref: '#/$defs/Color', default: 'auto' },
    odd: { anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'integer' }], title: 'Odd' },
  },
  $defs: { Color: { enum: ['auto', 'rgb'], title: 'Color', type: 'string' } },
};

const byName = Object.fromEntries(fieldsFromSchema(CONV).map((f) => [f.name, f]));

describe('fieldsFromSchema', () => {
  it('keeps the declaration order', () => {
    expect(Object.keys(byName)).toEqual(Object.keys(CONV.properties!));
  });

  it('maps numbers with their bounds, title, help text and default', () => {
    expect(byName.out_channels).toMatchObject({
      kind: 'integer',
      integer: true,
      minimum: 1,
      maximum: 4096,
      title: 'Out Channels',
      description: 'Number of filters.',
      default: 16,
      required: false,
      nullable: false,
    });
    expect(byName.p).toMatchObject({ kind: 'number', minimum: 0, exclusiveMaximum: 1 });
  });

  it('maps enums to selects, numeric enums included', () => {
    expect(byName.preset).toMatchObject({ kind: 'enum', options: ['dataset', 'imagenet', 'custom'] });
    expect(byName.channels).toMatchObject({ kind: 'enum', options: [1, 3] });
  });

  it('maps booleans to switches', () => {
    expect(byName.bias).toMatchObject({ kind: 'boolean', default: true });
  });

  it('maps "choice | number" unions to a select-or-number', () => {
    expect(byName.padding).toMatchObject({
      kind: 'choiceOrNumber',
      options: ['same', 'valid'],
      integer: true,
      default: 'same',
    });
    expect(byName.out_features).toMatchObject({ kind: 'choiceOrNumber', options: ['auto'] });
  });

  it('maps "X | null" to a nullable X', () => {
    expect(byName.width).toMatchObject({ kind: 'integer', nullable: true, minimum: 1, default: null });
    expect(byName.mean).toMatchObject({ kind: 'numberList', nullable: true, maxItems: 3 });
  });

  it('maps lists of strings, long strings, required strings and $refs', () => {
    expect(byName.categories).toMatchObject({ kind: 'stringList', minItems: 2 });
    expect(byName.expression).toMatchObject({ kind: 'text' });
    expect(byName.path).toMatchObject({ kind: 'string', required: true, minLength: 1 });
    expect(byName.color).toMatchObject({ kind: 'enum', options: ['auto', 'rgb'], title: 'Color', default: 'auto' });
  });

  it('falls back to JSON for unions it cannot draw', () => {
    expect(byName.odd!.kind).toBe('json');
  });
});

describe('defaultParams', () => {
  it('writes out every non-null default and nothing else', () => {
    expect(defaultParams(CONV)).toEqual({
      out_channels: 16,
      padding: 'same',
      bias: true,
      p: 0.5,
      out_features: 'auto',
      preset: 'dataset',
      channels: 1,
      expression: 'x',
      color: 'auto',
    });
  });
});

describe('parseFieldText', () => {
  it('parses numbers and says why text is not one', () => {
    expect(parseFieldText(byName.out_channels!, '32')).toEqual({ ok: true, value: 32 });
    expect(parseFieldText(byName.out_channels!, '3.5')).toEqual({ ok: false, error: 'notInteger' });
    expect(parseFieldText(byName.p!, 'abc')).toEqual({ ok: false, error: 'notNumber' });
    expect(parseFieldText(byName.p!, '0.25')).toEqual({ ok: true, value: 0.25 });
  });

  it('empties to null when nullable, else unsets the param', () => {
    expect(parseFieldText(byName.width!, '')).toEqual({ ok: true, value: null });
    expect(parseFieldText(byName.out_channels!, '  ')).toEqual({ ok: true, value: undefined });
    expect(parseFieldText(byName.path!, '')).toEqual({ ok: true, value: undefined });
  });

  it('parses lists', () => {
    expect(parseFieldText(byName.mean!, '0.5, 0.4 0.3')).toEqual({ ok: true, value: [0.5, 0.4, 0.3] });
    expect(parseFieldText(byName.mean!, '0.5, x')).toEqual({ ok: false, error: 'badList' });
    expect(parseFieldText(byName.categories!, 'cat, hot air balloon,')).toEqual({
      ok: true,
      value: ['cat', 'hot air balloon'],
    });
  });

  it('keeps strings as typed', () => {
    expect(parseFieldText(byName.expression!, 'clamp(x * 2, 0, 1) ')).toEqual({
      ok: true,
      value: 'clamp(x * 2, 0, 1) ',
    });
  });
});

describe('formatting', () => {
  it('shows lists comma-separated and empties as blank', () => {
    expect(formatFieldValue(byName.mean!, [0.5, 0.25])).toBe('0.5, 0.25');
    expect(formatFieldValue(byName.width!, null)).toBe('');
    expect(formatFieldValue(byName.odd!, { a: 1 })).toBe('{"a":1}');
  });

  it('falls back to the default for unset params', () => {
    expect(effectiveValue(byName.out_channels!, {})).toBe(16);
    expect(effectiveValue(byName.out_channels!, { out_channels: 8 })).toBe(8);
  });

  it('describes ranges', () => {
    expect(describeRange(byName.out_channels!)).toBe('1 – 4096');
    expect(describeRange(byName.p!)).toBe('≥ 0, < 1');
    expect(describeRange(byName.bias!)).toBe('');
  });
});
