import { describe, expect, it } from 'vitest';
import en from '../../i18n/en';
import zh from '../../i18n/zh';

// The empty canvas is the first screen: it spoke only of image classifiers, and a person with a
// spreadsheet read that DragDL was not for them.
describe('the first screen', () => {
  it('names tables and sequences beside images, and regression beside classification', () => {
    const english = `${en.canvas.emptyTitle} ${en.canvas.emptyBody}`;
    for (const word of ['images', 'table', 'sequences', 'classifier', 'regressor']) expect(english).toContain(word);
    const chinese = `${zh.canvas.emptyTitle} ${zh.canvas.emptyBody}`;
    for (const word of ['图像', '表格', '序列', '分类器', '回归器']) expect(chinese).toContain(word);
  });
});
