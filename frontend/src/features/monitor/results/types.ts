import type { TaskReport } from '../../tasks/api';
import type { TaskKindEntry } from '../../../api/types';

/** What a kind's result view is given: the finished task's report and the kind as the catalog
 * describes it (null for a kind the catalog does not know). */
export interface ResultViewProps {
  report: TaskReport;
  kind: TaskKindEntry | null;
}
