// ONNX Runtime Web, loaded on demand, on WebAssembly only, with its .wasm file served from the
// app's own assets (Vite copies it into the build: nothing comes from a CDN).
import type { InferenceSession } from 'onnxruntime-web';

type Ort = typeof import('onnxruntime-web/wasm');

let runtime: Promise<Ort> | null = null;

function loadRuntime(): Promise<Ort> {
  runtime ??= (async () => {
    const [ort, wasm] = await Promise.all([
      import('onnxruntime-web/wasm'),
      import('onnxruntime-web/ort-wasm-simd-threaded.wasm?url'),
    ]);
    ort.env.wasm.wasmPaths = { wasm: wasm.default };
    // Threads need a cross-origin-isolated page (SharedArrayBuffer); one thread is plenty here.
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    return ort;
  })().catch((error: unknown) => {
    runtime = null;
    throw error;
  });
  return runtime;
}

export interface BrowserModel {
  session: InferenceSession;
  inputName: string;
  outputName: string;
}

export async function createBrowserModel(
  bytes: ArrayBuffer,
  inputName = 'images',
  outputName = 'logits',
): Promise<BrowserModel> {
  const ort = await loadRuntime();
  const session = await ort.InferenceSession.create(new Uint8Array(bytes), { executionProviders: ['wasm'] });
  return {
    session,
    inputName: session.inputNames.includes(inputName) ? inputName : (session.inputNames[0] ?? inputName),
    outputName: session.outputNames.includes(outputName) ? outputName : (session.outputNames[0] ?? outputName),
  };
}

/** One image (CHW float32) through the network; returns its logits. */
export async function runLogits(
  model: BrowserModel,
  data: Float32Array,
  shape: readonly number[],
): Promise<Float32Array> {
  const ort = await loadRuntime();
  const input = new ort.Tensor('float32', data, [1, ...shape]);
  const outputs = await model.session.run({ [model.inputName]: input });
  const logits = outputs[model.outputName];
  if (!logits) throw new Error(`the model has no output “${model.outputName}”`);
  return logits.data as Float32Array;
}
