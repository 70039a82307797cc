// What the name scans share (features/catalog/kindNames.test.ts, features/inputs/inputNames.test.ts):
// the source files under src/, and the lines of one that match a forbidden form, comments left out.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const SRC = join(__dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** `file:line: text` of every code line of `text` that matches one of `forbidden`. */
export function forbiddenLines(file: string, text: string, forbidden: readonly RegExp[]): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => !/^(\/\/|\/\*|\*)/.test(line.trim()))
    .filter(({ line }) => forbidden.some((pattern) => pattern.test(line)))
    .map(({ line, i }) => `${file}:${i + 1}: ${line.trim()}`);
}

/** The forbidden lines of every source file under src/ that no `allowed` pattern exempts. */
export function offences(allowed: readonly RegExp[], scan: (file: string, text: string) => string[]): string[] {
  return sources(SRC)
    .map((path) => relative(SRC, path).split('\\').join('/'))
    .filter((file) => !allowed.some((pattern) => pattern.test(file)))
    .flatMap((file) => scan(file, readFileSync(join(SRC, file), 'utf8')));
}
