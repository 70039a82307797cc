// What Save does with the canvas: a new graph, a new version of the graph it was opened from, or a
// question first when its name was changed (a renamed canvas is often meant as a new graph, and
// saving it as a version made the graph it was opened from vanish from Open under another name).

export type SaveKind = 'new' | 'version' | 'askRename';

export function saveKind(link: { name: string } | null, canvasName: string): SaveKind {
  if (link === null) return 'new';
  return sameName(link.name, canvasName) ? 'version' : 'askRename';
}

/** Names as the server compares them: surrounding spaces do not count. */
export function sameName(a: string, b: string): boolean {
  return a.trim() === b.trim();
}
