// No component outside the input-type registry compares an input type's name: everything else asks
// the registry (features/inputs/registry.ts) or the catalog (a dataset node's output port).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..', '..');
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

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** `file:line: text` of every line that compares an input type's name. */
export function inputNameLines(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => !/^(\/\/|\/\*|\*)/.test(line.trim()))
    .filter(({ line }) => FORBIDDEN.some((pattern) => pattern.test(line)))
    .map(({ line, i }) => `${file}:${i + 1}: ${line.trim()}`);
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
    const offences = sources(SRC)
      .map((path) => relative(SRC, path).split('\\').join('/'))
      .filter((file) => !ALLOWED.some((pattern) => pattern.test(file)))
      .flatMap((file) => inputNameLines(file, readFileSync(join(SRC, file), 'utf8')));
    expect(offences).toEqual([]);
  });
});
