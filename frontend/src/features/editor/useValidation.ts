import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { validateGraph } from '../../api/graphs';
import type { GraphError, GraphSpec, ValidationResult } from '../../api/types';
import { validationKey } from './logic/convert';

export interface ValidationState {
  status: 'empty' | 'pending' | 'done' | 'error';
  /** The latest answer; kept while a newer request is pending so badges do not flicker. */
  result: ValidationResult | null;
  /** Why the last request failed (worded where it is shown, see i18n/errorText); null when it did not. */
  error: unknown;
}

export const VALIDATE_DELAY_MS = 300;

/** POST /api/graphs/validate, debounced, on every change that can change the answer. */
export function useValidation(graph: GraphSpec): ValidationState {
  const key = useMemo(() => validationKey(graph), [graph]);
  const latest = useRef(graph);
  useLayoutEffect(() => {
    latest.current = graph;
  }, [graph]);
  const [state, setState] = useState<ValidationState>({ status: 'empty', result: null, error: null });

  useEffect(() => {
    if (!latest.current.nodes.length) {
      setState({ status: 'empty', result: null, error: null });
      return;
    }
    setState((previous) => ({ ...previous, status: 'pending' }));
    const controller = new AbortController();
    const timer = window.setTimeout(() => {
      validateGraph(latest.current, controller.signal)
        .then((result) => {
          if (!controller.signal.aborted) setState({ status: 'done', result, error: null });
        })
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          setState((previous) => ({ status: 'error', result: previous.result, error }));
        });
    }, VALIDATE_DELAY_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [key]);

  return state;
}

/** Errors per node id; errors about the graph as a whole (or a node since deleted) under ''. */
export function groupErrors(errors: readonly GraphError[], nodeIds: ReadonlySet<string>): Map<string, GraphError[]> {
  const groups = new Map<string, GraphError[]>();
  for (const error of errors) {
    const key = error.node_id && nodeIds.has(error.node_id) ? error.node_id : '';
    groups.set(key, [...(groups.get(key) ?? []), error]);
  }
  return groups;
}
