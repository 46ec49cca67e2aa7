"""Writes seeds/failure_catalog.csv, the failure screen's patterns, from readable parts.

The screen is recall-first (docs/definitions.md#the-public-record): each failure kind is a
symptom (a metric name, a word in English or Chinese) followed, within a few words on the same
line, by what went wrong. The patterns are long, so they are written here from named parts; edit
the parts, run `python seeds/failure_patterns.py`, and commit both files
(tests/test_screens.py checks that the CSV is what this script writes). DuckDB runs the patterns
as RE2, case-insensitive: no lookaround, no backreferences.
"""

# ruff: noqa: E501 (the alternatives of a pattern stay on one line, readable as a list of words)

import csv
from pathlib import Path

CATALOG = Path(__file__).with_name("failure_catalog.csv")

# gaps: words between the parts of a pattern, within one line
G = r"[^\n]{0,60}"
S = r"[^\n]{0,30}"
Z = r"[^\n。]{0,30}"
UP = r"(increas\w*|grow\w*|explo(d|s)\w*|blow\w*|spik\w*|huge|very (large|high|big)|too (large|high|big)|large|high|skyrocket\w*|surg\w*|rising|rises|soar\w*|abnormal\w*|nan\b|inf\b|过大|很大|偏大|异常|增大|变大|上升|升高|飙升|暴涨|爆炸|突增)"
DOWN = r"(collaps\w*|drops?|dropped|dropping|decreas\w*|declin\w*|fall\w*|fell|plummet\w*|vanish\w*|shrink\w*|goes to (0|zero)|went to (0|zero)|(near|close to) (0|zero)|坍塌|塌缩|崩|下降|降低|骤降|降到|掉到|趋于0|变为0|变成0|消失)"
ROWS = [
    (
        "collapse_divergence",
        "Training collapse or divergence",
        r"\b(training|train|reward|rewards|policy|model|loss|accuracy|acc|score|scores|val\w*|eval\w*|critic|pg_loss|run|runs)\b"
        + G
        + r"\b(collaps\w*|diverg\w*|plummet\w*|deteriorat\w*|unstable|instabilit\w*|degrad\w*|(suddenly|sharply|significantly|dramatically) (drops?|dropped|decreas\w*|falls?|fell)|(drops?|dropped|decreas\w*|falls?|fell) (sharply|suddenly|significantly|dramatically|a lot)|(not|never|doesn't|does not|don't|do not|didn't|did not|can't|cannot|fails? to|failed to) (converg\w*|improv\w*|increas\w*|learn\w*|go up|rise|grow))"
        r"|\b(training|train) (crash\w*|collaps\w*)|训崩|训练崩|崩掉|不收敛|无法收敛|训练不稳定|(训练|模型|奖励|reward|loss|准确率|acc|score|分数|得分|指标|效果)"
        + Z
        + r"(崩溃|崩了|发散|不收敛|不稳定|骤降|暴跌|下降|掉到|变差|退化|不涨|不上升|不增长|没有(提升|上升|增长)|越来越(小|低|差))"
        r"|(keeps?|starts?|started|begins?|began) (repeat\w*|generat\w* (the same|garbage|gibberish))|(重复|乱码)"
        + Z
        + r"(生成|输出)|(生成|输出)"
        + Z
        + r"(重复|乱码|感叹号)",
    ),
    (
        "rollout_training_mismatch",
        "Rollout-training probability mismatch",
        r"(train(ing)?|trainer|fsdp|megatron)[- /](inference|infer|rollout|vllm|sglang)[- ]?(log[- ]?prob\w*|probabilit\w*)?[- ]?(mismatch|discrepanc\w*|gap|inconsisten\w*|diff\w*)"
        r"|(log[- _]?probs?|probabilit\w+|probs)"
        + G
        + r"(mismatch\w*|discrepanc\w*|inconsisten\w*|do not match|don't match|differ\w*)"
        r"|\b(vllm|sglang|rollout|inference)\b"
        + G
        + r"\b(log[- _]?probs?)\b"
        + G
        + r"\b(differ\w*|mismatch\w*|gap)\b"
        r"|(rollout_probs_diff\w*|probs_diff\w*|logprob\w*_diff\w*|log_probs?_diff\w*|rollout_log_?prob\w*|mismatch_kl|rollout_corr\w*|is_ratio\w*|\bis[_ ]weights?\b|importance[- _](sampling[- _])?(ratio|weight)s?|\bIS ratios?|\btis\b)"
        + G
        + UP
        + r"|log[- ]?probs? (abs )?diff\w*|logdiff|log[- ]?prob(abilit\w*)? (difference|error|gap)s?|(rollout|inference|推理)"
        + Z
        + r"(entrop\w*|熵)?"
        + Z
        + r"(差距|差异|不一致)"
        r"|(mult_prob_error|prob\w*_error|logprob\w*_error|prob(abilit\w*)? error)"
        + G
        + UP
        + r"|(very|extremely|too|so) (high|large|big)"
        + S
        + r"(mult_prob_error|prob\w*[_ ]error|log ?probs? diff\w*)"
        r"|训推(不一致|差异|偏差|误差|mismatch|gap)|(训练|train)"
        + Z
        + r"(推理|rollout|vllm|sglang)"
        + Z
        + r"(不一致|差异|偏差|误差|对不上)|(推理|rollout|vllm|sglang)"
        + Z
        + r"(训练|train)"
        + Z
        + r"(不一致|差异|偏差|误差|对不上)|(log ?prob|概率)"
        + Z
        + r"(差异|不一致|偏差|对不上|误差)",
    ),
    (
        "entropy_collapse",
        "Entropy collapse or loss of diversity",
        r"entrop\w*"
        + G
        + r"("
        + DOWN[1:-1]
        + r"|increas\w*|explo(d|s)\w*|spik\w*|rising|rises|上升|升高|暴涨|飙升|增大|爆炸)"
        r"|(loss of|lack of|no|low) (diversity|exploration)|(mode|diversity|entropy) collapse|熵"
        + Z
        + r"(坍塌|塌缩|崩|下降|降低|为0|消失|上升|暴涨|增大|爆炸)",
    ),
    (
        "sparse_reward",
        "Sparse or all-zero reward",
        r"sparse rewards?|all[- ]zero rewards?|zero[- ]variance|zero (advantage|reward)s?|all (the )?(rewards|samples|scores|responses) (are |get |have )?(0|zero|the same|identical|wrong|incorrect)"
        r"|\b(reward|rewards|loss)\s*(=|==)\s*-?0(\.0+)?\b|(reward|rewards|score|scores|奖励|得分)"
        + S
        + r"(is |are )?(always (the same|constant|-?\d)|constant|stuck|unchanged|不变|一直不变|始终不变)"
        r"|(reward|rewards|score|scores|acc|accuracy|loss|奖励|得分|分数|准确率)"
        + S
        + r"(always|stays?|stuck|remains?|keeps?|is|are|all|为|是|都是|都为|一直|始终|变成|变为|掉到|降到|drops? to|dropped to|dropping to|falling to|going to|goes down to|went to|goes to|fell to|falls? to|nearly|almost|close to|near|stays at|stuck at)\s*(at\s*)?-?(0|zero)(\.0+)?(\b|$|[^.\d])",
    ),
    (
        "length_bias",
        "Length bias or runaway response length",
        r"length bias|length (explosion|hacking|collapse)|(response|output|generation|completion|answer)s? (get|gets|getting|become|becomes|became|grow|grows) (longer|shorter|very long|too long)"
        r"|(re\w{0,3}nse|output|generation|completion|answer|seq|sequence)[_ /-]?(length|len)\w*"
        + G
        + r"(unusual\w*|exceptional\w*|abnormal\w*|weird|strange|(so|too|very|extremely) (high|height|large|big|long|short)|increas\w*|grow\w*|explo(d|s)\w*|decreas\w*|shrink\w*|collaps\w*|drops?|dropped|rising|rises|keeps? (growing|increasing|decreasing)|越来越|增加|减少|下降|暴涨|上升|爆炸|崩|变长|变短)"
        r"|(spikes?|explosion|surge|increase|drop) (in|of) (the )?(response|output|generation) length|(长度|回复|输出)"
        + Z
        + r"(越来越(长|短)|暴涨|坍塌|崩|变长|变短|一直(增加|减少|下降|上升)|骤降|爆炸)|(response_length|回复长度|输出长度)"
        + Z
        + r"(持续|迅速|快速)",
    ),
    (
        "reward_hacking",
        "Reward hacking",
        r"reward[- _]?hack\w*|reward gaming|(exploit\w*|gam\w*|hack\w*) (the )?reward|奖励(欺骗|黑客|作弊|被hack)",
    ),
    (
        "gradient_explosion",
        "Gradient explosion or NaN loss",
        r"grad(ient)?[_ /-]?norms?"
        + G
        + r"(nan\b|inf\b|explo(d|s)\w*|spik\w*|huge|very (large|high|big)|too (large|high|big)|skyrocket\w*|blow\w*|突增|爆炸|飙升|很大|过大|异常)"
        r"|\b(loss|losses)\b"
        + S
        + r"(spik\w*|explo(d|s)\w*)|spikes? in"
        + S
        + r"\bloss|^[^\n]*\b(nan|inf)\b|gradient explosion|exploding gradients?|(梯度)"
        + Z
        + r"(爆炸|消失|nan|异常|过大)"
        r"|\b(loss|losses|pg_loss|kl_loss|grad\w*|logits?|log_?probs?|advantages?|values?|outputs?|weights?)\b"
        + S
        + r"\b(is|are|becomes?|became|goes to|went to|turns?( into)?|returns?|=|:|为|变成|变为|出现|全是)\s*-?(nan|inf)\b"
        r"|\bnan\b"
        + S
        + r"\b(loss|losses|grad\w*|values?|logits?|weights?)\b|(出现|变成|变为|全是|为)\s*nan\b",
    ),
    (
        "kl_blowup",
        "KL divergence blow-up",
        r"(\bkl\w*|\bk[123]_kl\w*|/kl\w*|_kl\b|kl散度)"
        + G
        + r"(explo(d|s)\w*|blow\w*|spik\w*|huge|very (large|high|big)|too (large|high|big)|nan\b|inf\b|diverg\w*|increas\w*|grow\w*|rising|rises|skyrocket\w*|飙升|爆炸|增大|变大|上升|暴涨|很大|过大|异常)|kl (explosion|blow-?up|spikes?)",
    ),
    (
        "moe_routing_instability",
        "MoE routing instability",
        r"\b(moe|mixture[- ]of[- ]experts?|experts?|router|routing)\b"
        + G
        + r"(unstable|instabilit\w*|collaps\w*|mismatch\w*|imbalanc\w*|fluctuat\w*|inconsisten\w*|不稳定|不一致|崩|负载不均)",
    ),
    (
        "unspecified_training_failure",
        "Training failure of no specific kind",
        r"\b(training|train|rl|grpo|ppo|dapo|gspo|reinforce\w*|rloo|rollout|reward|rewards|loss|curves?|metrics?|score)\b"
        + G
        + r"\b(abnormal\w*|anomal\w*|weird|strange|odd|unexpected\w*|fluctuat\w*|oscillat\w*|(much )?worse than)\b"
        r"|^[^\n]*\b(oscillat\w*|fluctuat\w*|unstable|abnormal\w*|unusual\w*|weird|strange)\b"
        r"|\b(keeps?|kept|keep on) (fluctuat\w*|oscillat\w*|bouncing)"
        r"|(训练|曲线|指标|效果|奖励|reward|loss)"
        + Z
        + r"(异常|奇怪|不正常|不对|很差|变差|波动|震荡)"
        r"|(reward|rewards|score|acc\w*|loss|奖励)"
        + G
        + r"(\bnot\b|doesn't|does not|never|没有|不)"
        + S
        + r"(increas|improv|go up|goes up|rise|chang|decreas|go down|上升|提升|增长|变化|涨|下降)",
    ),
]


def write(path: Path = CATALOG) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["failure_code", "name", "pattern"])
        out.writerows(ROWS)


if __name__ == "__main__":
    write()
