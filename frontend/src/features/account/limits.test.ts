import { describe, expect, it } from 'vitest';
import type { UserPublic } from './api';
import { draftOf, updateOf } from './limits';

const user: UserPublic = {
  id: 2,
  username: 'alice',
  is_admin: false,
  max_running_tasks: null,
  dataset_quota_bytes: 5 * 1024 ** 3,
  artifact_quota_bytes: null,
  max_cpus_per_task: 2.5,
  max_gpus_per_task: 0,
  max_workers_per_task: 4,
  created_at: '2026-11-23T10:00:00Z',
};

describe('limit drafts', () => {
  it('shows quotas in GiB and leaves server defaults empty', () => {
    expect(draftOf(user)).toEqual({
      max_running_tasks: '',
      dataset_quota_bytes: '5',
      artifact_quota_bytes: '',
      max_cpus_per_task: '2.5',
      max_gpus_per_task: '0',
      max_workers_per_task: '4',
    });
  });

  it('turns the draft back into an update: GiB to bytes, empty to null (the default)', () => {
    const draft = { ...draftOf(user), artifact_quota_bytes: '0.5', max_running_tasks: '3' };
    expect(updateOf(draft)).toEqual({
      update: {
        max_running_tasks: 3,
        dataset_quota_bytes: 5 * 1024 ** 3,
        artifact_quota_bytes: 512 * 1024 ** 2,
        max_cpus_per_task: 2.5,
        max_gpus_per_task: 0,
        max_workers_per_task: 4,
      },
    });
  });

  it('names the first field that is not a usable number', () => {
    expect(updateOf({ ...draftOf(user), max_gpus_per_task: '-1' })).toEqual({ invalid: 'max_gpus_per_task' });
    expect(updateOf({ ...draftOf(user), max_cpus_per_task: '0' })).toEqual({ invalid: 'max_cpus_per_task' });
    expect(updateOf({ ...draftOf(user), max_running_tasks: '1.5' })).toEqual({ invalid: 'max_running_tasks' });
    expect(updateOf({ ...draftOf(user), dataset_quota_bytes: 'lots' })).toEqual({ invalid: 'dataset_quota_bytes' });
    expect(updateOf({ ...draftOf(user), max_workers_per_task: '0' })).toEqual({ invalid: 'max_workers_per_task' });
    expect(updateOf({ ...draftOf(user), max_workers_per_task: '2.5' })).toEqual({ invalid: 'max_workers_per_task' });
  });

  it("edits the cap on a distributed run's workers, empty for the server default", () => {
    expect(draftOf({ ...user, max_workers_per_task: null }).max_workers_per_task).toBe('');
    expect(updateOf({ ...draftOf(user), max_workers_per_task: '8' })).toMatchObject({
      update: { max_workers_per_task: 8 },
    });
    expect(updateOf({ ...draftOf(user), max_workers_per_task: ' ' })).toMatchObject({
      update: { max_workers_per_task: null },
    });
  });
});
