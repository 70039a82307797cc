// Datasets: list, detail with preview URLs, delete, and the upload with progress (XMLHttpRequest:
// fetch cannot report upload progress).
import { api, ApiError, call, errorMessage } from '../../api/client';

// As openapi-fetch returns them (its response types turn the schema's [h, w] tuples into arrays).
export type DatasetPublic = Awaited<ReturnType<typeof listDatasets>>[number];
export type DatasetDetail = Awaited<ReturnType<typeof getDataset>>;

const datasetPath = (datasetId: string) => ({ params: { path: { dataset_id: datasetId } } });

export async function listDatasets() {
  return (await call(() => api.GET('/api/datasets'))).data;
}

export function getDataset(datasetId: string) {
  return call(() => api.GET('/api/datasets/{dataset_id}', datasetPath(datasetId)));
}

export async function deleteDataset(datasetId: string): Promise<void> {
  await call(() => api.DELETE('/api/datasets/{dataset_id}', datasetPath(datasetId)));
}

export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface Upload {
  promise: Promise<DatasetPublic>;
  abort: () => void;
}

/** Send files (one .zip, or .npy files) as multipart `files`; onProgress follows the bytes sent.
 * `options` are the form's other fields (a CSV recording's label_column, window and stride). */
export function uploadDataset(
  files: readonly File[],
  name: string,
  onProgress: (progress: UploadProgress) => void,
  options: Readonly<Record<string, string>> = {},
): Upload {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<DatasetPublic>((resolve, reject) => {
    const form = new FormData();
    for (const file of files) form.append('files', file, file.name);
    if (name.trim()) form.append('name', name.trim());
    for (const [key, value] of Object.entries(options)) form.append(key, value);
    xhr.open('POST', '/api/datasets');
    xhr.responseType = 'text';
    // The server's CSRF rule for cookie-authenticated changes (see src/api/client.ts).
    xhr.setRequestHeader('X-Requested-With', 'dragdl-web');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress({ loaded: event.loaded, total: event.total });
    };
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // keep the text
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as DatasetPublic);
      else reject(new ApiError(xhr.status, errorMessage(body, xhr.status), body, xhr.getResponseHeader('Retry-After')));
    };
    xhr.onerror = () => reject(new ApiError(0, 'The server cannot be reached (the upload was interrupted)', null));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', null));
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}

/** Check a selection before sending it: one .zip, several .npy files (one per class), one table, or
 * a .ts file of sequences (or its _TRAIN.ts and _TEST.ts pair). */
export function checkSelection(
  files: readonly { name: string }[],
): 'ok' | 'empty' | 'mixed' | 'manyZips' | 'type' | 'oneNpy' | 'manyTables' | 'manyTs' {
  if (files.length === 0) return 'empty';
  const lower = files.map((file) => file.name.toLowerCase());
  const zips = lower.filter((name) => name.endsWith('.zip')).length;
  const npys = lower.filter((name) => name.endsWith('.npy')).length;
  const tables = lower.filter((name) => /\.(csv|tsv|parquet|xlsx)$/.test(name)).length;
  const series = lower.filter((name) => name.endsWith('.ts')).length;
  if (zips + npys + tables + series !== files.length) return 'type';
  if ((zips && npys) || (tables && zips + npys) || (series && zips + npys + tables)) return 'mixed';
  if (tables > 1) return 'manyTables';
  if (series > 2) return 'manyTs';
  if (zips > 1) return 'manyZips';
  if (npys === 1) return 'oneNpy';
  return 'ok';
}
