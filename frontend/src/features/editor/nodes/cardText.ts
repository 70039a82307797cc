// What a node card prints: short port texts and the params worth a line.

/** The widest port text, in columns (a CJK character takes two), that half a 180 px card shows whole:
 * an input and an output label share a row at 10.5 px monospace ("sequence | tensor" was cut to
 * "sequence | ten…", and 12 columns are cut too). */
export const PORT_TEXT_COLUMNS = 11;
/** The same for an input label alone on its row (`.dnode__port--alone`: the card's width). */
export const ALONE_PORT_TEXT_COLUMNS = 24;

/** Columns `text` takes in a monospace font: two for a wide (CJK) character, one for others. */
export function textColumns(text: string): number {
  let columns = 0;
  for (const char of text)
    columns += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60]/.test(char) ? 2 : 1;
  return columns;
}

/** An input port's text: its one type; its types joined when they fit `room` columns; else the port's
 * own label (the node's word for what it takes: "sequence", "input"), else `anyInput`. The tooltip
 * lists every type. */
export function inputPortText(
  types: readonly string[],
  typeName: (type: string) => string,
  label: string | undefined,
  anyInput: string,
  room: number = PORT_TEXT_COLUMNS,
): string {
  if (types.length === 1) return typeName(types[0] ?? '');
  const joined = types.map(typeName).join(' | ');
  if (textColumns(joined) <= room) return joined;
  return label && textColumns(label) <= room ? label : anyInput;
}

/** Params a card leaves out: a dataset's id means nothing to a reader (the card's title names it). */
const UNSHOWN = new Set(['dataset_id']);

export function shownOnCard<T extends { name: string }>(rows: readonly T[]): T[] {
  return rows.filter((row) => !UNSHOWN.has(row.name));
}
