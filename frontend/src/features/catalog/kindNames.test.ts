// No component outside the kinds' view registries names a task kind: everything else reads the
// catalog's task_kinds (taskKind.ts) or picks a view from a registry keyed by the kind's name.
import { describe, expect, it } from 'vitest';
import { forbiddenLines, offences } from '../../test/nameScan';

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

/** `file:line: text` of every line that names a kind. */
export function kindNameLines(file: string, text: string): string[] {
  return forbiddenLines(file, text, FORBIDDEN);
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
    expect(offences(ALLOWED, kindNameLines)).toEqual([]);
  });
});
