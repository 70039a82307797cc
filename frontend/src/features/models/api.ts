// Models: list, detail, manifest (model.json), prediction, downloads, delete.
import { api, ApiError, call, errorMessage } from '../../api/client';
import type { components } from '../../api/schema';
import type { Preprocessing } from './preprocess';

type Schemas = components['schemas'];
export type ModelPublic = Schemas['ModelPublic'];
export type Predictions = Schemas['PredictionsPublic'];
export type ImagePrediction = Schemas['ImagePredictionPublic'];
/** A regression model's answer for an image: one number. */
export type ImageValue = Schemas['ImageValuePublic'];
export type ColumnPublic = Schemas['ColumnPublic'];
export type RowPredictions = Schemas['RowPredictionsPublic'];
export type RowPrediction = RowPredictions['predictions'][number];
/** One table row for a table model: column -> number, category text, or null for missing. */
export type TableRow = Record<string, number | string | null>;
/** Rows one JSON request may carry (the server's limit). */
export const MAX_JSON_ROWS = 1000;
export type DownloadFormat = 'bundle' | 'onnx' | 'torchscript' | 'script';
export const DOWNLOAD_FORMATS: readonly DownloadFormat[] = ['bundle', 'onnx', 'torchscript', 'script'];

/** The parts of model.json the browser reads (src/dragdl/engine/bundle/spec.py). */
export interface Manifest {
  name: string;
  classes: string[];
  preprocessing: Preprocessing;
  input: { channels: 1 | 3; size: number[] | null; network_input: (number | null)[] };
  exports?: Record<string, { input_name?: string; output_name?: string }>;
}

const modelPath = (modelId: string) => ({ params: { path: { model_id: modelId } } });

export type ModelsPage = Schemas['ModelsPublic'];

/** The user's models; the models of sweep trials not registered as their sweep's best only with
 * `trials` (`hidden_trials` counts them otherwise). */
export function listModels(trials = false): Promise<ModelsPage> {
  return call(() => api.GET('/api/models', { params: { query: { trials } } }));
}

/** The model a task left, if any (sweep trials included). */
export async function modelOfTask(taskId: string): Promise<ModelPublic | null> {
  const page = await call(() => api.GET('/api/models', { params: { query: { task_id: taskId } } }));
  return page.data[0] ?? null;
}

export function getModel(modelId: string): Promise<ModelPublic> {
  return call(() => api.GET('/api/models/{model_id}', modelPath(modelId)));
}

export async function getManifest(modelId: string): Promise<Manifest> {
  return (await call(() => api.GET('/api/models/{model_id}/manifest', modelPath(modelId)))) as unknown as Manifest;
}

export async function deleteModel(modelId: string): Promise<void> {
  await call(() => api.DELETE('/api/models/{model_id}', modelPath(modelId)));
}

/** auto: the server inverts an image whose paper is the opposite of the training images'. */
export type InvertChoice = 'auto' | 'yes' | 'no';

export async function predict(
  modelId: string,
  images: readonly File[],
  topK: number,
  invert: InvertChoice = 'auto',
): Promise<Predictions> {
  const form = new FormData();
  for (const image of images) form.append('images', image, image.name);
  form.append('top_k', String(topK));
  form.append('invert', invert);
  // The generated body type is a JSON object; a FormData body passes through openapi-fetch as is.
  const answer = await call(() =>
    api.POST('/api/models/{model_id}/predict', {
      ...modelPath(modelId),
      body: form as unknown as Schemas['Body_predict'],
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
  // Images sent as `images` are answered per image (files of samples are answered by predictFiles).
  return answer as Predictions;
}

/** The multipart field of POST /predict that carries sample files for input types that predict from
 * files (sequences: .ts, .csv, .npy); images keep their own field (`predict`). */
export const PREDICT_FILES_FIELD = 'files';

/** A task kind's answer for one sample (its `answer_schema` in GET /api/catalog): a classifier's
 * label, probability, top_k and probabilities; a regressor's value. */
export interface FileAnswer {
  label?: string;
  probability?: number;
  probabilities?: number[];
  top_k?: { class: string; probability: number }[];
  value?: number;
}

/** The answer for one sample of an uploaded file (SamplePredictionPublic). */
export interface SampleAnswer {
  filename: string;
  /** Its position in the file, counted from 1 (a .ts or .npy file may hold several). */
  sample: number;
  answer: FileAnswer;
  /** The answer in one line, as the CLI prints it. */
  summary: string;
}

/** Answers for the samples of uploaded files, in file order, each file's samples in order. */
export async function predictFiles(
  modelId: string,
  files: readonly File[],
  topK = 5,
): Promise<{ classes: string[]; predictions: SampleAnswer[] }> {
  const form = new FormData();
  for (const file of files) form.append(PREDICT_FILES_FIELD, file, file.name);
  form.append('top_k', String(topK));
  // The generated body type is a JSON object; a FormData body passes through openapi-fetch as is.
  const answer = await call(() =>
    api.POST('/api/models/{model_id}/predict', {
      ...modelPath(modelId),
      body: form as unknown as Schemas['Body_predict'],
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
  return answer as unknown as { classes: string[]; predictions: SampleAnswer[] };
}

const rowsPath = (modelId: string) => ({ params: { path: { model_id: modelId }, query: { top_k: 5 } } });

/** A table model's answers for rows typed in the form (at most MAX_JSON_ROWS). */
export function predictRows(modelId: string, rows: readonly TableRow[]): Promise<RowPredictions> {
  return call(() =>
    api.POST('/api/models/{model_id}/predict/rows', { ...rowsPath(modelId), body: { rows: [...rows] } }),
  );
}

/** A table model's answers for every row of a CSV or TSV file (its header names the columns). */
export function predictCsv(modelId: string, file: File): Promise<RowPredictions> {
  const form = new FormData();
  form.append('file', file, file.name);
  // The generated body type is the JSON one; a FormData body passes through openapi-fetch as is.
  return call(() =>
    api.POST('/api/models/{model_id}/predict/rows', {
      ...rowsPath(modelId),
      body: form as unknown as { rows: TableRow[] },
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
}

export function downloadUrl(modelId: string, format: DownloadFormat): string {
  return `/api/models/${encodeURIComponent(modelId)}/download?format=${format}`;
}

/** A download's bytes and file name; the server's message when it refuses (e.g. no ONNX export). */
export async function fetchDownload(
  modelId: string,
  format: DownloadFormat,
): Promise<{ blob: Blob; filename: string }> {
  let response: Response;
  try {
    response = await fetch(downloadUrl(modelId, format), { credentials: 'same-origin' });
  } catch (error) {
    throw new ApiError(0, `The server cannot be reached (${(error as Error).message})`, null);
  }
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // a plain-text error stays text
    }
    throw new ApiError(response.status, errorMessage(body, response.status), body, response.headers.get('Retry-After'));
  }
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  const filename = match?.[1] ? decodeURIComponent(match[1]) : `model-${modelId}.${format === 'script' ? 'py' : 'bin'}`;
  return { blob: await response.blob(), filename };
}

export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}
