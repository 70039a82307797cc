import { describe, expect, it } from 'vitest';
import { t } from './testI18n';
import { statusNotes } from './statusLine';

describe('monitor status line', () => {
  it('follows the training instead of the note of how it began', () => {
    const running = {
      status: 'RUNNING',
      statusMessage: 'attempt 1 starting',
      resumedFromEpoch: null,
      epoch: 3,
      epochs: 8,
    };
    expect(statusNotes(running, t, 'en')).toEqual(['training · epoch 3 of 8']);
  });

  it('says it resumed only when the trainer resumed from a checkpoint', () => {
    const fresh = {
      status: 'QUEUED',
      statusMessage: 'attempt 2 starting (resuming)',
      resumedFromEpoch: null,
      epoch: 0,
      epochs: 8,
    };
    expect(statusNotes(fresh, t, 'en')).toEqual(['attempt 2 starting (resuming)']);
    const resumed = { status: 'RUNNING', statusMessage: null, resumedFromEpoch: 2, epoch: 2, epochs: 8 };
    expect(statusNotes(resumed, t, 'en')).toEqual(['resumed from epoch 2', 'training · epoch 2 of 8']);
  });
});
