import { describe, expect, it } from 'vitest';
import { parseRoute, pathFor } from './routes';

describe('parseRoute', () => {
  it('opens the editor at the root and at /editor', () => {
    expect(parseRoute('/')).toEqual({ page: 'editor' });
    expect(parseRoute('/editor')).toEqual({ page: 'editor' });
    expect(parseRoute('/editor/')).toEqual({ page: 'editor' });
  });

  it('reads ids of tasks and models', () => {
    expect(parseRoute('/tasks')).toEqual({ page: 'tasks' });
    expect(parseRoute('/tasks/42')).toEqual({ page: 'tasks', taskId: '42' });
    expect(parseRoute('/models/a%20b')).toEqual({ page: 'models', modelId: 'a b' });
  });

  it('reads the sweeps list and a sweep id', () => {
    expect(parseRoute('/sweeps')).toEqual({ page: 'sweeps' });
    expect(parseRoute('/sweeps/s1')).toEqual({ page: 'sweeps', sweepId: 's1' });
  });

  it('opens the account page', () => {
    expect(parseRoute('/account')).toEqual({ page: 'account' });
    expect(parseRoute('/account/x')).toEqual({ page: 'notFound', path: '/account/x' });
  });

  it('reports unknown paths instead of guessing', () => {
    expect(parseRoute('/nope')).toEqual({ page: 'notFound', path: '/nope' });
    expect(parseRoute('/tasks/1/extra')).toEqual({ page: 'notFound', path: '/tasks/1/extra' });
  });

  it('builds paths that parse back', () => {
    expect(parseRoute(pathFor('tasks', 'x/y'))).toEqual({ page: 'tasks', taskId: 'x/y' });
  });
});
