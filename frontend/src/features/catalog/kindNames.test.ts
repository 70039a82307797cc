// No component outside the kinds' view registries names a task kind: everything else reads the
// catalog's task_kinds (taskKind.ts) or picks a view from a registry keyed by the kind's name.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..', '..');
/** The registries and the kinds' own views; tests, fixtures, message tables and generated types. */
const ALLOWED = [
  /^features\/monitor\/resultViews\.ts$/,
  /^features\/monitor\/results\//,
  /^features\/models\/answerViews\.ts$/,
  /^features\/models\/answers\//,
  /\.test\.tsx?$/,
  /^test\//,
  /(^|\/)messages\.ts$/,
  /^api\/schema\.d\.ts$/,
];
/** A kind's name as a string literal, or an equality with a kind's target word. (`'value' in x`
 * narrows the API's generated answer unions by field, as TypeScript needs, and is allowed.) */
const FORBIDDEN = [
  /['"`](classification|regression)['"`]/,
  /[!=]==?\s*['"`](classes|value)['"`]/,
  /['"`](classes|value)['"`]\s*[!=]==?/,
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** `file:line: text` of every line that names a kind. */
export function kindNameLines(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => !/^(\/\/|\/\*|\*)/.test(line.trim()))
    .filter(({ line }) => FORBIDDEN.some((pattern) => pattern.test(line)))
    .map(({ line, i }) => `${file}:${i + 1}: ${line.trim()}`);
}

describe('task kind names', () => {
  it('are caught in each forbidden form, and asking the catalog is not', () => {
    const caught = kindNameLines(
      'x.ts',
      "a = kind === 'regression';\nb = model.task !== \"classification\";\nc = x == 'value';\nd = 'classes' === target;",
    );
    expect(caught).toHaveLength(4);
    expect(kindNameLines('x.ts', 'a = ranksClasses(catalog, model.task);\n// a regression model')).toEqual([]);
  });

  it('appear nowhere outside the view registries', () => {
    const offences = sources(SRC)
      .map((path) => relative(SRC, path).split('\\').join('/'))
      .filter((file) => !ALLOWED.some((pattern) => pattern.test(file)))
      .flatMap((file) => kindNameLines(file, readFileSync(join(SRC, file), 'utf8')));
    expect(offences).toEqual([]);
  });
});
