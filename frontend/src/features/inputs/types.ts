import type { ComponentType, ReactNode } from 'react';
import type { TFunction } from 'i18next';
import type { DatasetSummary } from '../../api/types';
import type { DatasetDetail, DatasetPublic } from '../datasets/api';
import type { ModelPublic } from '../models/api';

/** A dataset preview's body (the page draws its title and close button around it). */
export interface PreviewProps {
  dataset: DatasetDetail;
}

/** A prediction page's body: the model, and the "trained by" link its facts line ends with. */
export interface PredictProps {
  model: ModelPublic;
  trainedBy: ReactNode;
}

/** What the web UI shows of one input type. Every part is optional: a type without one gets the
 * generic part (counts and classes; a file upload for prediction; the server's edge label). */
export interface InputView {
  Preview?: ComponentType<PreviewProps>;
  Predict?: ComponentType<PredictProps>;
  /** An edge label in the reader's language, or null when `shape` is not of this type's form (the
   * server words a sample's shape in English: "13 features", "64 x 1 seq"). */
  edgeLabel?: (shape: string, t: TFunction) => string | null;
  /** One line of a dataset's facts (the datasets list's format column). */
  facts?: (dataset: DatasetPublic, t: TFunction, language: string) => string;
  /** The dataset picker's note under a chosen dataset (default: `facts`). */
  note?: (dataset: DatasetPublic, t: TFunction, language: string) => string;
  /** What a dataset's count counts, as a column title: "Images", "Rows", "Sequences". */
  countTitle?: (t: TFunction) => string;
  /** A count of its samples in words: "1,200 sequences". */
  counted?: (count: number, t: TFunction, language: string) => string;
  /** What validation read of the dataset, in one line (the property panel's dataset facts). */
  summary?: (dataset: DatasetSummary, t: TFunction, language: string) => string;
}
