// A node's params JSON Schema (Pydantic's model_json_schema) -> the fields of its property form.
import type { JsonObject, JsonSchema, JsonValue } from '../../../api/types';

export type FieldKind =
  | 'integer'
  | 'number'
  | 'boolean'
  | 'enum'
  | 'string'
  | 'text'
  | 'choiceOrNumber'
  | 'numberList'
  | 'stringList'
  | 'json';

export interface FieldSpec {
  name: string;
  title: string;
  description: string;
  kind: FieldKind;
  required: boolean;
  /** Empty is a legal value (`X | None` in the params model): it is sent as null. */
  nullable: boolean;
  default: JsonValue | undefined;
  /** Choices of an enum, or the named choices of a choice-or-number field ("same" | "valid" | int). */
  options?: JsonValue[];
  /** What each option is called in the catalog's language (the option itself when absent). */
  optionLabels?: string[];
  /** Shown only while these params have one of the listed values (`x-show-if`). */
  showIf?: Record<string, JsonValue[]>;
  /** Shown only while these params are above the numbers given (`x-show-above`). */
  showAbove?: Record<string, number>;
  /** Fixed at `value` here, for `reason` (`x-locked`): shown disabled, with the reason. */
  locked?: { value: JsonValue; reason: string };
  /** Whole numbers only: integer fields, the number of a choice-or-number, items of a number list. */
  integer?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
}

/** Strings this long or longer get a multi-line box (a Lambda expression, a description). */
const TEXTAREA_FROM = 200;

function resolve(schema: JsonSchema, root: JsonSchema, depth = 0): JsonSchema {
  if (depth > 10) return schema;
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/(\$defs|definitions)\//, '');
    const target = root.$defs?.[name] ?? (root as { definitions?: Record<string, JsonSchema> }).definitions?.[name];
    if (target) {
      const { $ref: _ref, ...rest } = schema;
      return resolve({ ...target, ...rest }, root, depth + 1);
    }
  }
  if (schema.allOf?.length === 1) {
    const { allOf, ...rest } = schema;
    return resolve({ ...allOf[0], ...rest }, root, depth + 1);
  }
  return schema;
}

const isNull = (schema: JsonSchema) => schema.type === 'null';
const isNumeric = (schema: JsonSchema) => schema.type === 'integer' || schema.type === 'number';
const isStringChoice = (schema: JsonSchema) =>
  (schema.enum !== undefined && schema.enum.every((v) => typeof v === 'string')) || typeof schema.const === 'string';

function bounds(schema: JsonSchema): Partial<FieldSpec> {
  const out: Partial<FieldSpec> = {};
  for (const key of [
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
  ] as const) {
    if (typeof schema[key] === 'number') out[key] = schema[key];
  }
  if (schema.pattern) out.pattern = schema.pattern;
  return out;
}

function labelsOf(schema: JsonSchema): Partial<FieldSpec> {
  const labels = schema['x-enum-labels'];
  const count = schema.enum?.length ?? (schema.const !== undefined ? 1 : 0);
  return labels && labels.length === count ? { optionLabels: labels } : {};
}

function kindOf(schema: JsonSchema): Partial<FieldSpec> & { kind: FieldKind } {
  if (schema.enum) return { kind: 'enum', options: schema.enum, ...labelsOf(schema) };
  if (schema.const !== undefined) return { kind: 'enum', options: [schema.const] };
  switch (schema.type) {
    case 'boolean':
      return { kind: 'boolean' };
    case 'integer':
      return { kind: 'integer', integer: true, ...bounds(schema) };
    case 'number':
      return { kind: 'number', ...bounds(schema) };
    case 'string':
      return { kind: (schema.maxLength ?? 0) >= TEXTAREA_FROM ? 'text' : 'string', ...bounds(schema) };
    case 'array': {
      const items = schema.items ?? {};
      const listBounds = { minItems: schema.minItems, maxItems: schema.maxItems };
      if (isNumeric(items)) return { kind: 'numberList', integer: items.type === 'integer', ...listBounds };
      if (items.type === 'string')
        return { kind: 'stringList', ...listBounds, ...(items.pattern ? { pattern: items.pattern } : {}) };
      return { kind: 'json' };
    }
    default:
      return { kind: 'json' };
  }
}

export function fieldFromSchema(name: string, property: JsonSchema, root: JsonSchema, required: boolean): FieldSpec {
  const schema = resolve(property, root);
  const common = {
    name,
    title: schema.title ?? name,
    description: schema.description ?? '',
    required,
    default: schema.default,
    ...(schema['x-show-if'] ? { showIf: schema['x-show-if'] } : {}),
    ...(schema['x-show-above'] ? { showAbove: schema['x-show-above'] } : {}),
    ...(schema['x-locked'] ? { locked: schema['x-locked'] } : {}),
  };
  let nullable = false;
  let types = schema.type;
  let base: JsonSchema = schema;

  if (Array.isArray(types)) {
    nullable = types.includes('null');
    types = types.filter((t) => t !== 'null');
    base = { ...schema, type: types.length === 1 ? types[0] : types };
  }
  const variants = (schema.anyOf ?? schema.oneOf)?.map((v) => resolve(v, root));
  if (variants) {
    const present = variants.filter((v) => !isNull(v));
    nullable = present.length < variants.length;
    if (present.length === 1) {
      base = present[0]!;
    } else if (present.length === 2 && present.some(isStringChoice) && present.some(isNumeric)) {
      const choice = present.find(isStringChoice)!;
      const numeric = present.find(isNumeric)!;
      return {
        ...common,
        nullable,
        kind: 'choiceOrNumber',
        options: choice.enum ?? [choice.const as JsonValue],
        ...labelsOf(choice),
        integer: numeric.type === 'integer',
        ...bounds(numeric),
      };
    } else {
      return { ...common, nullable, kind: 'json' };
    }
  }
  return { ...common, nullable, ...kindOf(base) };
}

/** The form's fields in the params model's declaration order. */
export function fieldsFromSchema(schema: JsonSchema): FieldSpec[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) =>
    fieldFromSchema(name, property, schema, required.has(name)),
  );
}

/** Whether a field applies to these params: every `showIf` param holds one of its listed values,
 * and every `showAbove` param is above its number. */
export function fieldApplies(field: FieldSpec, fields: readonly FieldSpec[], params: JsonObject): boolean {
  const valueOf = (name: string) => {
    const other = fields.find((candidate) => candidate.name === name);
    return other ? effectiveValue(other, params) : params[name];
  };
  const listed = Object.entries(field.showIf ?? {}).every(([name, allowed]) =>
    allowed.some((choice) => choice === valueOf(name)),
  );
  const above = Object.entries(field.showAbove ?? {}).every(([name, limit]) => {
    const value = valueOf(name);
    return typeof value === 'number' && value > limit;
  });
  return listed && above;
}

/** The label of an option: the catalog's label for it, else the value itself. */
export function optionLabel(field: FieldSpec, option: JsonValue): string {
  const index = (field.options ?? []).findIndex((candidate) => candidate === option);
  return (index >= 0 ? field.optionLabels?.[index] : undefined) ?? String(option);
}

/** The params a new node starts with: every default, written out so the file says what runs. */
export function defaultParams(schema: JsonSchema): JsonObject {
  const params: JsonObject = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = resolve(property, schema).default;
    if (value !== undefined && value !== null) params[name] = structuredClone(value);
  }
  return params;
}

export type ParseError = 'notNumber' | 'notInteger' | 'badList' | 'badJson';
/** `value: undefined` removes the param, so the node falls back to its default. */
export type ParseResult = { ok: true; value: JsonValue | undefined } | { ok: false; error: ParseError };

function parseNumber(raw: string, integer: boolean): ParseResult {
  const value = Number(raw);
  if (!raw.trim() || !Number.isFinite(value)) return { ok: false, error: 'notNumber' };
  if (integer && !Number.isInteger(value)) return { ok: false, error: 'notInteger' };
  return { ok: true, value };
}

/** Text typed into a field -> the param value to store. */
export function parseFieldText(field: FieldSpec, raw: string): ParseResult {
  const text = raw.trim();
  if (!text && field.kind !== 'string' && field.kind !== 'text')
    return { ok: true, value: field.nullable ? null : undefined };
  switch (field.kind) {
    case 'integer':
    case 'number':
    case 'choiceOrNumber':
      return parseNumber(text, field.integer === true || field.kind === 'integer');
    case 'numberList': {
      const parts = text.split(/[\s,;]+/).filter(Boolean);
      const values = parts.map(Number);
      if (values.some((v) => !Number.isFinite(v))) return { ok: false, error: 'badList' };
      if (field.integer && values.some((v) => !Number.isInteger(v))) return { ok: false, error: 'notInteger' };
      return { ok: true, value: values };
    }
    case 'stringList':
      return {
        ok: true,
        value: text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      };
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text) as JsonValue };
      } catch {
        return { ok: false, error: 'badJson' };
      }
    case 'string':
    case 'text':
      return { ok: true, value: raw === '' ? (field.nullable ? null : undefined) : raw };
    default:
      return { ok: true, value: raw };
  }
}

/** A param value -> the text shown in its field. */
export function formatFieldValue(field: FieldSpec, value: JsonValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (field.kind === 'json') return JSON.stringify(value);
  if (Array.isArray(value)) return value.map((v) => String(v)).join(', ');
  return String(value);
}

/** The value a field shows: the param when set, else the schema default. */
export function effectiveValue(field: FieldSpec, params: JsonObject): JsonValue | undefined {
  return field.name in params ? params[field.name] : field.default;
}

/** "1 – 4096", "> 0", "≤ 0.5": the legal range, for the field's help line. */
export function describeRange(field: FieldSpec): string {
  const low =
    field.exclusiveMinimum !== undefined
      ? `> ${field.exclusiveMinimum}`
      : field.minimum !== undefined
        ? `≥ ${field.minimum}`
        : '';
  const high =
    field.exclusiveMaximum !== undefined
      ? `< ${field.exclusiveMaximum}`
      : field.maximum !== undefined
        ? `≤ ${field.maximum}`
        : '';
  if (field.minimum !== undefined && field.maximum !== undefined) return `${field.minimum} – ${field.maximum}`;
  return [low, high].filter(Boolean).join(', ');
}
