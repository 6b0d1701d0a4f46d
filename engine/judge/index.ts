// engine/judge: one DNS query in, one decision out (shared by the DNS role's inline path and the pool workers).
export {
  Judge,
  compileBlockAnswers,
  JUDGE_ANSWER,
  JUDGE_FORWARD,
  JUDGE_SAFEVIDEO,
  JUDGE_LOCAL,
  type JudgeKind,
  type BlockAnswers,
  type JudgeOptions
} from './judge.js'
export { buildRecord } from './record.js'
export { type DdrEndpoints, type LocalAnswerOptions, type LocalReason } from './local-answers.js'
export { ddrEndpointsFromConfig, localAnswersFor } from './local-config.js'
