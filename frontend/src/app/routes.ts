// The app's pages and a path matcher. Paths are real URLs: `dragdl serve` answers every
// non-/api path with index.html, so a reload or a shared link opens the same page.

export type Route =
  | { page: 'editor' }
  | { page: 'tasks'; taskId?: string }
  | { page: 'sweeps'; sweepId?: string }
  | { page: 'datasets' }
  | { page: 'models'; modelId?: string }
  | { page: 'account' }
  | { page: 'notFound'; path: string };

export type PageName = Exclude<Route['page'], 'notFound'>;

export const NAV_PAGES: readonly PageName[] = ['editor', 'tasks', 'sweeps', 'datasets', 'models'];

export function parseRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [head, id, ...rest] = parts;
  if (rest.length) return { page: 'notFound', path: pathname };
  switch (head) {
    case undefined:
    case 'editor':
      return id === undefined ? { page: 'editor' } : { page: 'notFound', path: pathname };
    case 'tasks':
      return id === undefined ? { page: 'tasks' } : { page: 'tasks', taskId: id };
    case 'sweeps':
      return id === undefined ? { page: 'sweeps' } : { page: 'sweeps', sweepId: id };
    case 'datasets':
      return id === undefined ? { page: 'datasets' } : { page: 'notFound', path: pathname };
    case 'models':
      return id === undefined ? { page: 'models' } : { page: 'models', modelId: id };
    case 'account':
      return id === undefined ? { page: 'account' } : { page: 'notFound', path: pathname };
    default:
      return { page: 'notFound', path: pathname };
  }
}

export function pathFor(page: PageName, id?: string): string {
  return id === undefined ? `/${page}` : `/${page}/${encodeURIComponent(id)}`;
}
