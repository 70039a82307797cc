/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `dragdl serve` serves this folder (src/dragdl/server/app.py); it is a build output, not source.
const outDir = fileURLToPath(new URL('../src/dragdl/server/static', import.meta.url));

export default defineConfig({
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        // Libraries in chunks of their own: their hashed names stay the same from one release of
        // the app to the next (a browser keeps them cached), and each page loads only the ones it
        // uses. The sign-in form needs react and i18n; the canvas adds flow; charts load echarts.
        // React Flow's stylesheet stays with the app's (main.tsx), which overrides some of its rules.
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'i18n', test: /node_modules[\\/](i18next|react-i18next)[\\/]/ },
            { name: 'flow', test: /node_modules[\\/](@xyflow|@dagrejs|d3-[a-z]+|zustand|classcat)[\\/](?!.*\.css$)/ },
            { name: 'echarts', test: /node_modules[\\/](echarts|zrender|tslib)[\\/]/ },
          ],
        },
      },
    },
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8000' },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
  },
});
