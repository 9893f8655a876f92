"""Judge-corrected verdicts (PPI++ with hand labels from the label queue): coverage, false
alarms, width against labels alone, a perfect judge, and judge_agreement's intervals.

The generator is independent of evalkit's own calibration generators (``tests/judge/world.py``:
logit-normal cell rates, a judge that calls a true fail "pass" with the false-pass rate and a
true pass "fail" with the false-fail rate, a deterministic rule that is exact). Truth is the
grid expectation: the mean over cells of each cell's pass probability (and the points-weighted
score). Labels are the truth on the pairs ``label_queue`` draws (a quarter of judged pairs a
side unless said), carrying its inclusion probabilities. Nothing is asserted (tests/judge
asserts binomial bounds on a small version); this prints the tables README shows.

Run: ``python benchmarks/bench_judge_correction.py [--trials 200]`` (~3-5 min on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.compare import compare_grades
from evalkit.grading import AgreementOptions, judge_agreement, label_queue
from evalkit.stats import ppi_mean
from tests.judge.world import (
    World,
    effects,
    expected_rates,
    expected_score,
    labels_for,
    pair,
)

BASE = {"tone": 0.8, "resolves": 0.8, "greets": 0.9}
DROP = {"tone": 0.5, "resolves": 0.8, "greets": 0.9}


def _labels(world: World, b: pd.DataFrame, c: pd.DataFrame, share: float, seed: int):  # type: ignore[no-untyped-def]
    n = round(share * 2 * world.cells * world.repeats)
    return pd.concat(
        [
            labels_for(label_queue(b, n=n, seed=seed), b),
            labels_for(label_queue(c, n=n, seed=seed + 100_000), c),
        ]
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def coverage(trials: int) -> None:
    """A lenient judge (false-pass 35%, false-fail 5%), 60 cells x 5 repeats a side, a
    30-point drop on judged rule ``tone``, 25% of judged pairs labelled."""
    world = World(cells=60, repeats=5, false_pass=0.35, false_fail=0.05)
    hits = {k: 0 for k in ("diff_c", "diff_j", "rule_c", "rule_j", "rdiff_c", "rdiff_j")}
    widths: dict[str, list[float]] = {"c": [], "j": []}
    estimates: dict[str, list[float]] = {"c": [], "j": [], "truth": []}
    for t in range(trials):
        b, c = pair(world, BASE, DROP, 10_000 + t)
        cell_effects = effects(world, 10_000 + t)
        truth = expected_score(DROP, cell_effects) - expected_score(BASE, cell_effects)
        rates = (expected_rates(BASE, cell_effects), expected_rates(DROP, cell_effects))
        tone, tone_diff = rates[1]["tone"], 100 * (rates[1]["tone"] - rates[0]["tone"])
        for key, result in (
            ("c", compare_grades(b, c, labels=_labels(world, b, c, 0.25, t))),
            ("j", compare_grades(b, c)),
        ):
            row = result.summary.iloc[0]
            rule = result.by_rule.set_index("rule_id").loc["tone"]
            hits[f"diff_{key}"] += row["difference_low"] <= truth <= row["difference_high"]
            low, high = rule["pass_rate_candidate_low"], rule["pass_rate_candidate_high"]
            hits[f"rule_{key}"] += low <= tone <= high
            hits[f"rdiff_{key}"] += rule["difference_low"] <= tone_diff <= rule["difference_high"]
            widths[key].append(row["difference_high"] - row["difference_low"])
            estimates[key].append(row["difference"])
        estimates["truth"].append(truth)
    print(
        f"\nCoverage, lenient judge (false-pass 35%, false-fail 5%), 60 cells x 5 repeats a "
        f"side, 30-point drop on a judged rule, 25% of judged pairs labelled; {trials} trials\n"
    )
    print(
        "| interval (95%) | judge-corrected (PPI++) | judge alone |\n|---|---|---|\n"
        f"| score difference (headline) | {_pct(hits['diff_c'] / trials)} | "
        f"{_pct(hits['diff_j'] / trials)} |\n"
        f"| the rule's pass rate (candidate) | {_pct(hits['rule_c'] / trials)} | "
        f"{_pct(hits['rule_j'] / trials)} |\n"
        f"| the rule's difference (by_rule, Bonferroni over 3 rules) | "
        f"{_pct(hits['rdiff_c'] / trials)} | {_pct(hits['rdiff_j'] / trials)} |\n"
        f"| mean headline difference (truth {np.mean(estimates['truth']):.1f}) | "
        f"{np.mean(estimates['c']):.1f} | {np.mean(estimates['j']):.1f} |\n"
        f"| median headline interval width (points) | {np.median(widths['c']):.1f} | "
        f"{np.median(widths['j']):.1f} |"
    )


def false_alarms(trials: int) -> None:
    world = World(cells=60, repeats=5, false_pass=0.35, false_fail=0.05)
    headline = family = 0
    for t in range(trials):
        b, c = pair(world, BASE, BASE, 20_000 + t)
        result = compare_grades(b, c, labels=_labels(world, b, c, 0.25, t))
        headline += result.verdict.value in ("improved", "regressed")
        family += result.by_rule["direction"].isin(["improved", "regressed"]).any()
    print(
        f"\nA/A, same lenient judge and labels, {trials} trials: headline false alarms "
        f"{_pct(headline / trials)}, per-rule family-wise {_pct(family / trials)} (nominal 5%)"
    )


def _rule_width(world: World, labels_share: float, seed: int, lam: float | None) -> float:
    """Width (points) of one rule's corrected pass-rate interval on one side."""
    b, _ = pair(world, BASE, BASE, seed)
    n = round(labels_share * 2 * world.cells * world.repeats)
    queue = label_queue(b, n=n, rules=None, seed=seed)
    rows = b[b["rule_id"] == "tone"].reset_index(drop=True)
    lab = labels_for(queue, b)
    lab = lab[lab["rule_id"] == "tone"].set_index("conversation_id")
    y = rows["conversation_id"].map(lab["label"]).map({"pass": 1.0, "fail": 0.0})
    w = 1.0 / rows["conversation_id"].map(lab["inclusion_probability"])
    yhat = (rows["verdict"] == "pass").astype(float)
    est = ppi_mean(yhat.to_numpy(), y.to_numpy(dtype=float), w.to_numpy(dtype=float), lam=lam)
    return 100 * (est.high - est.low)


def width(trials: int) -> None:
    """A judge that agrees with people 90% of the time: PPI++ against labels alone."""
    world = World(cells=60, repeats=5, false_pass=0.1, false_fail=0.1)
    rows = []
    for share in (0.15, 0.25):
        ppi = [_rule_width(world, share, 30_000 + t, None) for t in range(trials)]
        alone = [_rule_width(world, share, 30_000 + t, 0.0) for t in range(trials)]
        rows.append((share, np.mean(ppi), np.mean(alone)))
    fewer = [_rule_width(world, 0.15, 30_000 + t, None) for t in range(trials)]
    alone_25 = [_rule_width(world, 0.25, 30_000 + t, 0.0) for t in range(trials)]
    print(
        "\nWidth, judge agreeing 90% with people (false-pass = false-fail = 10%), one judged "
        f"rule's pass rate, 300 conversations; {trials} trials\n"
    )
    print("| labelled | PPI++ width | labels-alone width | ratio |\n|---|---|---|---|")
    for share, p, a in rows:
        print(f"| {share:.0%} ({int(share * 600 / 2)} of 300) | {p:.1f} | {a:.1f} | {p / a:.2f} |")
    print(
        f"| PPI++ with 45 labels vs labels alone with 75 (40% fewer) | {np.mean(fewer):.1f} | "
        f"{np.mean(alone_25):.1f} | {np.mean(fewer) / np.mean(alone_25):.2f} |"
    )


def perfect(trials: int) -> None:
    world = World(cells=60, repeats=5, false_pass=0.0, false_fail=0.0)
    ratios = []
    for t in range(trials):
        b, c = pair(world, BASE, DROP, 40_000 + t)
        fixed = compare_grades(b, c, labels=_labels(world, b, c, 0.25, t)).summary.iloc[0]
        alone = compare_grades(b, c).summary.iloc[0]
        ratios.append(
            (fixed["difference_high"] - fixed["difference_low"])
            / (alone["difference_high"] - alone["difference_low"])
        )
    print(
        f"\nPerfect judge, 25% labelled, {trials} trials: corrected / judge-alone headline width "
        f"median {np.median(ratios):.3f}, max {np.max(ratios):.3f}"
    )


def agreement(trials: int) -> None:
    """judge_agreement's intervals against the population accuracy, F1 of fail and kappa."""
    print(
        "\njudge_agreement interval coverage (95%), labels pass 70%, judge errs symmetrically; "
        f"{trials} trials\n"
    )
    print(
        "| n labels | judge accuracy | all agree in | accuracy | F1(fail) | kappa | "
        "zero-width |\n|---|---|---|---|---|---|---|"
    )
    rng = np.random.default_rng(5)
    for accuracy in (0.9, 0.98):
        p, e = 0.7, 1 - accuracy
        # population: P(judge fail, label fail) etc.
        ff, fp_, pf, pp = (1 - p) * (1 - e), (1 - p) * e, p * e, p * (1 - e)
        f1 = 2 * ff / (2 * ff + fp_ + pf)
        po = ff + pp
        pe = (ff + pf) * (ff + fp_) + (pp + fp_) * (pp + pf)
        kappa = (po - pe) / (1 - pe)
        for n in (10, 30, 100):
            cover = {"a": 0, "f": 0, "k": 0}
            counted = {"f": 0, "k": 0}
            all_agree = zero = 0
            for _ in range(trials):
                truth = rng.random(n) < p
                said = np.where(rng.random(n) < e, ~truth, truth)
                ids = [f"c{i}" for i in range(n)]
                grades = pd.DataFrame(
                    {"conversation_id": ids, "rule_id": "r",
                     "verdict": np.where(said, "pass", "fail")}
                )  # fmt: skip
                labels = pd.DataFrame(
                    {"conversation_id": ids, "rule_id": "r",
                     "label": np.where(truth, "pass", "fail")}
                )  # fmt: skip
                row = judge_agreement(
                    grades, labels, options=AgreementOptions(n_resamples=400)
                ).iloc[0]
                all_agree += bool((said == truth).all())
                cover["a"] += row["accuracy_low"] <= accuracy <= row["accuracy_high"]
                for key, value, low, high in (
                    ("f", f1, row["f1_fail_low"], row["f1_fail_high"]),
                    ("k", kappa, row["kappa_low"], row["kappa_high"]),
                ):
                    if np.isnan(low):
                        continue
                    counted[key] += 1
                    cover[key] += low <= value <= high
                    zero += bool(high - low <= 0)
                zero += bool(row["accuracy_high"] - row["accuracy_low"] <= 0)
            print(
                f"| {n} | {accuracy:.0%} | {_pct(all_agree / trials)} | "
                f"{_pct(cover['a'] / trials)} | "
                f"{_pct(cover['f'] / max(counted['f'], 1))} ({counted['f']}) | "
                f"{_pct(cover['k'] / max(counted['k'], 1))} ({counted['k']}) | {zero} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200, help="trials per table")
    args = parser.parse_args()
    start = time.perf_counter()
    coverage(args.trials)
    false_alarms(args.trials)
    width(args.trials)
    perfect(max(args.trials // 4, 10))
    agreement(args.trials)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
