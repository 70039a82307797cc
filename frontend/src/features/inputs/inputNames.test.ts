// No component outside the input-type registry compares an input type's name: everything else asks
// the registry (features/inputs/registry.ts) or the catalog (a dataset node's output port).
import { describe, expect, it } from 'vitest';
import { forbiddenLines, offences } from '../../test/nameScan';

/** The registry; tests, fixtures, message tables and generated types. */
const ALLOWED = [
  /^features\/inputs\/registry\.ts$/,
  /\.test\.tsx?$/,
  /^test\//,
  /(^|\/)messages\.ts$/,
  /^i18n\//,
  /^api\/schema\.d\.ts$/,
];
const NAME = `['"\`](images|table|sequence)['"\`]`;
/** An equality with a type's name either way round, or a switch case on one. */
const FORBIDDEN = [
  new RegExp(`[!=]==?\\s*${NAME}`),
  new RegExp(`${NAME}\\s*[!=]==?`),
  new RegExp(`case\\s+${NAME}\\s*:`),
];

/** `file:line: text` of every line that compares an input type's name. */
export function inputNameLines(file: string, text: string): string[] {
  return forbiddenLines(file, text, FORBIDDEN);
}

describe('input type names', () => {
  it('are caught in each forbidden form, and asking the registry is not', () => {
    const caught = inputNameLines(
      'x.ts',
      [
        "a = port === 'table' ? 'table' : 'images';",
        'b = type !== "sequence";',
        "c = 'images' == kind;",
        "switch (type) { case 'sequence': break; }",
      ].join('\n'),
    );
    expect(caught).toHaveLength(4);
    expect(
      inputNameLines('x.ts', 'const Preview = previewOf(type);\n<DropZone inputName="images" />\n// a \'table\' model'),
    ).toEqual([]);
  });

  it('are compared nowhere outside the registry', () => {
    expect(offences(ALLOWED, inputNameLines)).toEqual([]);
  });
});
