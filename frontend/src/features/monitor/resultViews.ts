// The result view of each task kind, keyed by the kind's name (report.task). The only place of the
// monitor that names kinds: a kind without a view here gets GenericResults, a table of its test
// metrics as the catalog describes them.
import type { ComponentType } from 'react';
import { ClassificationResults } from './results/ClassificationResults';
import { GenericResults } from './results/GenericResults';
import { RegressionResults } from './results/RegressionResults';
import type { ResultViewProps } from './results/types';

export const RESULT_VIEWS: Readonly<Record<string, ComponentType<ResultViewProps>>> = {
  classification: ClassificationResults,
  regression: RegressionResults,
};

/** The view that shows a finished run of `kind`. */
export function resultView(kind: string | null): ComponentType<ResultViewProps> {
  return (kind !== null && RESULT_VIEWS[kind]) || GenericResults;
}
