import { afterEach, describe, expect, it, vi } from 'vitest';
import { api } from '../../api/client';
import { listTasks } from './api';

describe('listTasks', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sends the list order with the page and the status filter', async () => {
    const queries: unknown[] = [];
    const get = (_path: string, init: { params: { query: unknown } }) => {
      queries.push(init.params.query);
      return Promise.resolve({ data: { data: [], count: 0 }, response: new Response('{}') });
    };
    vi.spyOn(api, 'GET').mockImplementation(get as unknown as typeof api.GET);
    await listTasks('FAILED', 50, 50, 'status');
    await listTasks(null, 0, 50, 'name');
    await listTasks(null, 0, 50);
    expect(queries).toEqual([
      { status: 'FAILED', offset: 50, limit: 50, sort: 'status' },
      { offset: 0, limit: 50, sort: 'name' },
      { offset: 0, limit: 50, sort: 'newest' },
    ]);
  });
});
