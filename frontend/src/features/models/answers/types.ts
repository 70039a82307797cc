import type { ModelPublic } from '../api';

/** What a kind's answer summary is given: the model (its classes, its target). */
export interface AnswerSummaryProps {
  model: ModelPublic;
}
