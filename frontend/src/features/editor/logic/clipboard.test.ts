import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../test/fixtures';
import { copySelection, nextNodeId, pasteClipboard } from './clipboard';
import { makeNode } from './convert';
import type { EditorEdge } from './types';

const nodes = [
  { ...makeNode('data', 'dataset.builtin', { name: 'digits' }, { x: 0, y: 0 }, CATALOG), selected: true },
  { ...makeNode('conv2d-1', 'layer.Conv2d', { out_channels: 8 }, { x: 200, y: 0 }, CATALOG), selected: true },
  makeNode('relu-1', 'layer.ReLU', {}, { x: 400, y: 0 }, CATALOG),
];
const edges: EditorEdge[] = [
  { id: 'e1', type: 'shape', source: 'data', target: 'conv2d-1', sourceHandle: 'out', targetHandle: 'in' },
  { id: 'e2', type: 'shape', source: 'conv2d-1', target: 'relu-1', sourceHandle: 'out', targetHandle: 'in' },
];

describe('nextNodeId', () => {
  it('derives a readable id from the type that matches the graph id pattern', () => {
    expect(nextNodeId('layer.Conv2d', new Set())).toBe('conv2d-1');
    expect(nextNodeId('layer.Conv2d', new Set(['conv2d-1', 'conv2d-2']))).toBe('conv2d-3');
    expect(nextNodeId('weird.???', new Set())).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe('copy and paste', () => {
  it('copies the selected nodes and only the edges between them', () => {
    const clip = copySelection(nodes, edges)!;
    expect(clip.nodes.map((n) => n.id)).toEqual(['data', 'conv2d-1']);
    expect(clip.edges).toEqual([{ source: 'data', target: 'conv2d-1', sourceHandle: 'out', targetHandle: 'in' }]);
  });

  it('copies nothing without a selection', () => {
    expect(
      copySelection(
        nodes.map((n) => ({ ...n, selected: false })),
        edges,
      ),
    ).toBeNull();
  });

  it('pastes with fresh ids, moved, with the inner edges rewired', () => {
    const clip = copySelection(nodes, edges)!;
    const pasted = pasteClipboard(clip, new Set(nodes.map((n) => n.id)), { x: 40, y: 40 });
    expect(pasted.nodes.map((n) => n.id)).toEqual(['builtin-1', 'conv2d-2']);
    expect(pasted.nodes[1]!.position).toEqual({ x: 240, y: 40 });
    expect(pasted.edges).toEqual([
      { source: 'builtin-1', target: 'conv2d-2', sourceHandle: 'out', targetHandle: 'in' },
    ]);
    // The copy does not share params with the original.
    pasted.nodes[1]!.params.out_channels = 99;
    expect(clip.nodes[1]!.params.out_channels).toBe(8);
  });
});
