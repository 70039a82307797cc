// What each task kind's model answers, as the model list shows it, keyed by the kind's name
// (model.task). The only place of the models feature that names kinds: a kind without a view here
// gets GenericAnswer (its title from the catalog). How an answer is shown on the prediction page
// follows the kind's `ranks_classes` from the catalog (taskKind.ts: ranksClasses).
import type { ComponentType } from 'react';
import { ClassesAnswer } from './answers/ClassesAnswer';
import { GenericAnswer } from './answers/GenericAnswer';
import type { AnswerSummaryProps } from './answers/types';
import { ValueAnswer } from './answers/ValueAnswer';

export const ANSWER_VIEWS: Readonly<Record<string, ComponentType<AnswerSummaryProps>>> = {
  classification: ClassesAnswer,
  regression: ValueAnswer,
};

/** The view of what a model of `kind` answers. */
export function answerSummary(kind: string | null | undefined): ComponentType<AnswerSummaryProps> {
  return (kind && ANSWER_VIEWS[kind]) || GenericAnswer;
}
