// Logits -> probabilities, the top classes, the pie chart's slices, and browser/server agreement.

/** Softmax in double precision, shifted by the maximum so large logits do not overflow. */
export function softmax(logits: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i += 1) max = Math.max(max, logits[i]!);
  const exps = Array.from(logits, (v) => Math.exp(v - max));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((v) => v / total);
}

export interface Ranked {
  index: number;
  label: string;
  probability: number;
}

/** The k most probable classes, most probable first (ties keep the class order). */
export function topK(probabilities: readonly number[], classes: readonly string[], k: number): Ranked[] {
  return probabilities
    .map((probability, index) => ({ index, label: classes[index] ?? String(index), probability }))
    .sort((a, b) => b.probability - a.probability || a.index - b.index)
    .slice(0, Math.max(0, k));
}

/** Largest |a_i - b_i|; Infinity when the lengths differ (different class lists never agree). */
export function maxAbsDiff(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; i += 1) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** The agreement the UI promises between browser and server probabilities. */
export const AGREEMENT_TOLERANCE = 1e-3;

export function agrees(diff: number): boolean {
  return Number.isFinite(diff) && diff <= AGREEMENT_TOLERANCE;
}

/** Pie slices: the `k` most probable classes and one "other" slice for the rest (when it counts). */
export function pieSlices(
  probabilities: readonly number[],
  classes: readonly string[],
  k: number,
  otherLabel: string,
): { name: string; value: number }[] {
  const top = topK(probabilities, classes, k);
  const rest = 1 - top.reduce((sum, item) => sum + item.probability, 0);
  const slices = top.map((item) => ({ name: item.label, value: item.probability }));
  if (probabilities.length > k && rest > 1e-4) slices.push({ name: otherLabel, value: rest });
  return slices;
}

/** The most classes a ranking lists. */
export const TOP_K = 5;

/**
 * How many classes an answer's ranking lists, and its heading: 'Top 5' of many classes, 'Every
 * class' when the model has no more than five (a two-class model was offered a 'Top 5').
 */
export function ranking(classCount: number): { count: number; key: 'models.topK' | 'models.everyClass' } {
  return classCount <= TOP_K ? { count: classCount, key: 'models.everyClass' } : { count: TOP_K, key: 'models.topK' };
}
