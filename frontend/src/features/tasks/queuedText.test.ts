import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { tasksMessages } from './messages';
import { queuedText } from './queuedText';

async function translator(lng: string): Promise<TFunction> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: { en: { translation: tasksMessages.en }, zh: { translation: tasksMessages.zh } },
    lng,
  });
  return i18n.t.bind(i18n) as TFunction;
}

describe('queued reasons', () => {
  const tooBig = { code: 'no_node_fits', details: { cpus: 4, gpus: 0, nodes: 2, node_cpus: 2, node_gpus: 0 } };

  it('say with the figures why a task waits, in English and Chinese', async () => {
    expect(queuedText(tooBig, await translator('en'))).toBe(
      'Waits for a node with 4 CPUs and 0 GPUs: the largest node has 2 CPUs, and no node more than 0 GPUs',
    );
    expect(queuedText(tooBig, await translator('zh'))).toBe(
      '等待一个有 4 个 CPU 和 0 个 GPU 的节点：最大的节点只有 2 个 CPU，单个节点最多 0 个 GPU',
    );
    expect(queuedText({ code: 'running_limit', details: { limit: 2 } }, await translator('zh'))).toBe(
      '等待中：您已有 2 个任务在运行，达到同时运行的上限',
    );
  });

  it('read as plain waiting for a code the page does not know', async () => {
    expect(queuedText({ code: 'new_code', details: {} }, await translator('zh'))).toBe('等待开始');
  });
});
