// The details of a validation problem that only its English message carries. Table and dataset
// errors reach the UI with a code and a sentence (the engine's DatasetError has no details yet), so
// the Chinese text would drop the column, the "did you mean", the list of columns and the row
// numbers. Each pattern below reads those values back from the engine's own sentence, for the
// code's detailed template; whatever a pattern misses is still shown (`missingValues`).

/** A sequence file's place as the readers name it: "train.ts, line 12", "walk/1.csv, lines 3-9". */
const FILE_WHERE = /^(?<where>[^\s:'"]+(?:, (?:lines?|rows?|columns?|series|values?|samples?) [\d,-]+)*): /;

/** Per code: the engine's English sentence, with the values its detailed template uses as named groups. */
const PATTERNS: Record<string, RegExp[]> = {
  column_unknown: [
    /has no [\w ]*?(?<column>'[^']*'|"[^"]*")(?:; did you mean (?<close>.*?)\?)? \(columns: (?<columns>.*)\)$/,
  ],
  missing_values: [/^row (?<row>\d+), column (?<column>'[^']*'|"[^"]*") has no value \((?<count>\d+) missing in all\)/],
  text_feature: [/^column (?<column>'[^']*'|"[^"]*") holds text/],
  target_missing: [
    /target column (?<column>'[^']*'|"[^"]*") is empty in row (?<row>\d+) \((?<count>\d+) rows in all\)/,
  ],
  value_not_numeric: [/^row (?<row>\d+), column (?<column>'[^']*'|"[^"]*"): (?<value>.*) is not a number/],
  unknown_category: [
    /^row (?<row>\d+), column (?<column>'[^']*'|"[^"]*"): (?<value>.*) is not one of the values seen in training \((?<known>.*)\)$/,
  ],
  target_not_numeric: [/target column (?<column>'[^']*'|"[^"]*") holds the text (?<value>.*) in row (?<row>\d+)/],
  // "<file>[, line N]: why": the file is named before the reason.
  dataset_invalid: [/^(?<where>[^\s:]+\.\w+(?:, (?:line|row) \d+)?): /],
  too_many_categories: [/has (?<count>\d+) distinct values, more than (?<limit>\d+)/],
  // Sequence files: "<file or folder>[, line N][, column N]: why" (the readers' DatasetErrors).
  ...Object.fromEntries(
    [
      'all_missing',
      'bad_file',
      'dataset_empty',
      'file_too_large',
      'file_type',
      'label_unknown',
      'labels_missing',
      'npy_pickled',
      'row_invalid',
      'too_large',
      'too_many_samples',
      'truncated',
      'value_invalid',
    ].map((code) => [code, [FILE_WHERE]]),
  ),
};

/** The named values of `message` for its code's detailed template, or null when no pattern reads it. */
export function messageDetails(code: string, message: string): Record<string, string> | null {
  for (const pattern of PATTERNS[code] ?? []) {
    const groups = pattern.exec(message)?.groups;
    if (groups) {
      return Object.fromEntries(Object.entries(groups).map(([key, value]) => [key, value ?? '']));
    }
  }
  return null;
}

/**
 * The values an English message shows a reader: quoted names and values ('species'), and numbers
 * standing alone (row 12, 11 missing). Numbers inside names or shapes (linear-1, 3x32x32) are not.
 */
export function shownValues(message: string): string[] {
  const quoted = [...message.matchAll(/'([^']+)'|"([^"]+)"/g)].map((match) => match[1] ?? match[2] ?? '');
  const unquoted = message.replace(/'[^']*'|"[^"]*"/g, ' ');
  const numbers = [...unquoted.matchAll(/(?<![\w.×-])\d+(?:\.\d+)?(?![\w.×])/g)].map((match) => match[0]);
  return [...new Set([...quoted, ...numbers].filter((value) => value !== ''))];
}

/** The values `english` shows that `translated` leaves out, in their order. */
export function missingValues(english: string, translated: string): string[] {
  return shownValues(english).filter((value) => !translated.includes(value));
}
