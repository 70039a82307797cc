// Warnings (severity "warning") are graphs that train but probably not as meant: they are shown
// beside the errors, in amber, and never stop Train.
import type { GraphError } from '../../../api/types';

export function isWarning(error: GraphError): boolean {
  return error.severity === 'warning';
}

/** The errors that make a graph invalid: every problem but the warnings. */
export function blockingErrors(errors: readonly GraphError[]): GraphError[] {
  return errors.filter((error) => !isWarning(error));
}
