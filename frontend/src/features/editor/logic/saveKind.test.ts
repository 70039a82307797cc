import { describe, expect, it } from 'vitest';
import { saveKind } from './saveKind';

describe('saveKind', () => {
  it('saves an unsaved canvas as a new graph', () => {
    expect(saveKind(null, 'penguins')).toBe('new');
  });
  it('saves a new version when the canvas keeps the saved name', () => {
    expect(saveKind({ name: 'penguins species' }, ' penguins species ')).toBe('version');
  });
  it('asks before a renamed canvas replaces the graph it was opened from', () => {
    expect(saveKind({ name: 'penguins species' }, 'penguins mass')).toBe('askRename');
  });
});
