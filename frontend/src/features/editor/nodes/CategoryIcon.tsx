import type { NodeCategory } from '../logic/types';

const PATHS: Record<NodeCategory, string> = {
  // stacked discs: a store of images
  dataset:
    'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3Zm0 0v6c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12v6c0 1.7 3.6 3 8 3s8-1.3 8-3v-6',
  // sliders: operators that adjust images
  op: 'M4 7h10M18 7h2M4 17h4M12 17h8M16 5v4M10 15v4',
  // layers
  layer: 'M12 3 3 8l9 5 9-5-9-5Zm-9 9 9 5 9-5M3 16l9 5 9-5',
  // cube: a packaged, pretrained model
  model: 'M12 3 4 7.5v9L12 21l8-4.5v-9L12 3Zm0 0v0M4 7.5l8 4.5 8-4.5M12 12v9',
  // flag: the finish of the graph
  train: 'M5 21V4m0 0h11l-2 4 2 4H5',
  unknown: 'M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6V14m0 3h.01',
};

export function CategoryIcon({ category, size = 16 }: { category: NodeCategory; size?: number }) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <path d={PATHS[category]} />
    </svg>
  );
}
