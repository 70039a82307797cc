// What a node card prints: short port texts and the params worth a line.

/** More accepted types than this read as "input": a layer's port takes every input type, and
 * "images | table | sequence | tensor" cut to "images | t…" said less than one word. */
const LISTED_TYPES = 2;

/** An input port's text: its types when they are few, else `anyInput` (the tooltip lists them). */
export function inputPortText(types: readonly string[], typeName: (type: string) => string, anyInput: string): string {
  return types.length > LISTED_TYPES ? anyInput : types.map(typeName).join(' | ');
}

/** Params a card leaves out: a dataset's id means nothing to a reader (the card's title names it). */
const UNSHOWN = new Set(['dataset_id']);

export function shownOnCard<T extends { name: string }>(rows: readonly T[]): T[] {
  return rows.filter((row) => !UNSHOWN.has(row.name));
}
