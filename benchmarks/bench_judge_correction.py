"""Judge-corrected verdicts (hand labels from the label queue): A/A false claims against the
former method, coverage and width of the stratified estimator against the former at equal
labels (proportional and Neyman allocation), power, width against labels alone, a perfect
judge, and judge_agreement's intervals.

The generator is independent of evalkit's own calibration generators (``tests/judge/world.py``:
logit-normal cell rates, a judge that calls a true fail "pass" with the false-pass rate and a
true pass "fail" with the false-fail rate, a deterministic rule that is exact). Truth is the
grid expectation: the mean over cells of each cell's pass probability (and the points-weighted
score). Labels are the truth on the pairs ``label_queue`` draws, carrying its inclusion
probabilities; "x% labels" is that share of a side's judged (conversation, rule) pairs.

"Former" is the method before the labels' degrees of freedom: PPI++ pseudo-values (the label
terms unscaled) in the comparison with the design's degrees of freedom (~320 conversations at
40 cells x 5 repeats a side), rebuilt here from :func:`evalkit.stats.ppi_pseudo_values`.
Intervals on rates are Wilson's (95%); "within" says whether the rate lies within the 99%
binomial bounds of 5% for the trial count. Nothing is asserted (tests/judge and tests/stats
assert binomial bounds on small versions); this prints the tables the docs show.

Run: ``python benchmarks/bench_judge_correction.py [--trials 2000]`` (about 40 min on 2 idle
cores at the default; ``--trials 400`` for a quick look: rows scale with it).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.compare import compare_grades
from evalkit.grading import AgreementOptions, Grades, LabelOptions, judge_agreement, label_queue
from evalkit.stats import ppi_mean, ppi_pseudo_values, wilson_interval
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
SMALL_DROP = {"tone": 0.65, "resolves": 0.8, "greets": 0.9}
JUDGED = ("tone", "resolves")
LENIENT = (0.35, 0.05)


def _rate(hits: float, trials: int) -> str:
    low, high = wilson_interval(int(hits), trials)
    return f"{100 * hits / trials:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _within(hits: int, trials: int, nominal: float = 0.05) -> str:
    high = stats.binom.ppf(0.995, trials, nominal)
    return "yes" if hits <= high else "**no**"


def _n(world: World, share: float) -> int:
    return round(share * len(JUDGED) * world.cells * world.repeats)


def _queue_labels(grades: pd.DataFrame, n: int, seed: int, allocation: str) -> pd.DataFrame:
    """Labels on ``n`` queue pairs: at once (proportional), or half proportional and then a
    Neyman top-up read from those labels (the two-phase way a team would run it)."""
    if allocation == "proportional":
        return labels_for(label_queue(grades, options=LabelOptions(n=n, seed=seed)), grades)
    first = labels_for(label_queue(grades, options=LabelOptions(n=n // 2, seed=seed)), grades)
    opts = LabelOptions(n=n - n // 2, seed=seed + 1, allocation="neyman")
    return pd.concat([first, labels_for(label_queue(grades, first, options=opts), grades)])


def _labels(
    b: pd.DataFrame, c: pd.DataFrame, n: int, seed: int, allocation: str = "proportional"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _queue_labels(b, n, seed, allocation), _queue_labels(c, n, seed + 100_000, allocation)


def _former_side(grades: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One side corrected the former way: PPI++ pseudo-values per judged rule."""
    out = grades.copy()
    lab = labels.set_index(["conversation_id", "rule_id"])
    for rule in JUDGED:
        rows = np.flatnonzero((out["rule_id"] == rule).to_numpy())
        keys = list(zip(out["conversation_id"].iloc[rows], [rule] * len(rows), strict=True))
        found = lab.reindex(keys)
        y = found["label"].map({"pass": 1.0, "fail": 0.0}).to_numpy(dtype=np.float64)
        w = 1.0 / found["inclusion_probability"].to_numpy(dtype=np.float64)
        yhat = (out["verdict"].iloc[rows] == "pass").to_numpy(dtype=np.float64)
        psi, _ = ppi_pseudo_values(yhat, y, w)
        points = out["points"].iloc[rows].to_numpy(dtype=np.float64)
        out.iloc[rows, out.columns.get_loc("points_awarded")] = points * psi
    return out


def _former(b: pd.DataFrame, c: pd.DataFrame, labels: tuple[pd.DataFrame, pd.DataFrame]):  # type: ignore[no-untyped-def]
    return compare_grades(_former_side(b, labels[0]), _former_side(c, labels[1]))


def _claims(verdict: str) -> bool:
    return verdict in ("improved", "regressed")


def false_claims(trials: int) -> None:
    """A/A: the former method and today's, per judge and share of labels."""
    rows = [
        ("lenient (false-pass 35%, false-fail 5%)", LENIENT, 0.10, 40, trials, "proportional"),
        ("lenient", LENIENT, 0.10, 40, trials // 2, "neyman"),
        ("lenient", LENIENT, 0.05, 40, trials // 2, "proportional"),
        ("agrees 90% (false-pass = false-fail = 10%)", (0.1, 0.1), 0.10, 40, trials // 2,
         "proportional"),
        ("good, rare errors (false-pass 10%, false-fail 2%)", (0.1, 0.02), 0.10, 40,
         trials // 2, "proportional"),
        ("lenient", LENIENT, 0.25, 60, trials // 4, "proportional"),
    ]  # fmt: skip
    print(
        "\nA/A false claims (headline improved or regressed at 95%; nominal 5%), cells x 5 "
        "repeats a side\n"
    )
    print(
        "| judge | labels | cells | allocation | trials | former | now | now within 5% | "
        "median df (former, now) |\n|---|---|---|---|---|---|---|---|---|"
    )
    for name, (fp, ff), share, cells, n_trials, allocation in rows:
        world = World(cells=cells, repeats=5, false_pass=fp, false_fail=ff)
        former = now = 0
        dfs: dict[str, list[float]] = {"former": [], "now": []}
        for t in range(n_trials):
            b, c = pair(world, BASE, BASE, 20_000 + t)
            labels = _labels(b, c, _n(world, share), t, allocation)
            new = compare_grades(b, c, labels=pd.concat(labels))
            now += _claims(new.verdict.value)
            dfs["now"].append(float(new.summary.iloc[0]["df"]))
            if allocation == "proportional":
                old = _former(b, c, labels)
                former += _claims(old.verdict.value)
                dfs["former"].append(float(old.summary.iloc[0]["df"]))
        old_rate = _rate(former, n_trials) if dfs["former"] else "(as proportional)"
        old_df = f"{np.median(dfs['former']):.0f}" if dfs["former"] else "-"
        print(
            f"| {name} | {share:.0%} | {cells} | {allocation} | {n_trials} | {old_rate} | "
            f"{_rate(now, n_trials)} | {_within(now, n_trials)} | "
            f"{old_df}, {np.median(dfs['now']):.0f} |",
            flush=True,
        )


def _side_rate(grades: pd.DataFrame, labels: pd.DataFrame) -> tuple[float, float]:
    row = Grades.of(grades).by_rule(labels=labels).set_index("rule_id").loc["tone"]
    return float(row["corrected_low"]), float(row["corrected_high"])


def _former_rate(grades: pd.DataFrame, labels: pd.DataFrame) -> tuple[float, float]:
    rows = grades[grades["rule_id"] == "tone"]
    lab = labels[labels["rule_id"] == "tone"].set_index("conversation_id")
    y = rows["conversation_id"].map(lab["label"]).map({"pass": 1.0, "fail": 0.0})
    w = 1.0 / rows["conversation_id"].map(lab["inclusion_probability"])
    yhat = (rows["verdict"] == "pass").to_numpy(dtype=np.float64)
    psi, _ = ppi_pseudo_values(yhat, y.to_numpy(dtype=np.float64), w.to_numpy(dtype=np.float64))
    half = stats.norm.ppf(0.975) * psi.std(ddof=1) / np.sqrt(len(psi))
    return float(psi.mean() - half), float(psi.mean() + half)


def allocation(trials: int) -> None:
    """One judged rule's pass rate on one side (200 conversations): coverage and width of
    the former interval and of today's (stratified), proportional and Neyman, at equal labels."""
    print(
        "\nOne judged rule's 95% pass-rate interval, 40 cells x 5 repeats (200 conversations), "
        f"equal labels; {trials} trials a row (coverage with Wilson intervals)\n"
    )
    print(
        "| judge | labels | former coverage | former width | now, proportional: coverage | "
        "width | now, Neyman: coverage | width |\n|---|---|---|---|---|---|---|---|"
    )
    judges = [
        ("lenient (false-pass 35%, false-fail 5%)", LENIENT),
        ("passes hide the errors (false-pass 40%, false-fail 0%)", (0.4, 0.0)),
        ("agrees 90%", (0.1, 0.1)),
    ]
    for name, (fp, ff) in judges:
        world = World(cells=40, repeats=5, false_pass=fp, false_fail=ff)
        for n in (20, 40):
            hits = {"former": 0, "proportional": 0, "neyman": 0}
            widths: dict[str, list[float]] = {k: [] for k in hits}
            for t in range(trials):
                seed = 30_000 + t
                b, _ = pair(world, BASE, BASE, seed)
                truth = expected_rates(BASE, effects(world, seed))["tone"]
                for kind in ("proportional", "neyman"):
                    labels = _queue_labels(b, 2 * n, t, kind)  # n on each judged rule
                    low, high = _side_rate(b, labels)
                    hits[kind] += low <= truth <= high
                    widths[kind].append(100 * (high - low))
                    if kind == "proportional":
                        low, high = _former_rate(b, labels)
                        hits["former"] += low <= truth <= high
                        widths["former"].append(100 * (high - low))
            cells = " | ".join(
                f"{_rate(hits[k], trials)} | {np.mean(widths[k]):.1f}"
                for k in ("former", "proportional", "neyman")
            )
            print(f"| {name} | {n} | {cells} |", flush=True)


def coverage_and_power(trials: int) -> None:
    """A lenient judge, a drop on judged rule ``tone``: coverage of the score difference and
    how often the drop is called, former against now, at 10% and 25% labels."""
    print(
        "\nA drop on judged rule tone, lenient judge, 40 cells x 5 repeats a side; "
        f"{trials} trials a row\n"
    )
    print(
        "| drop (points on tone) | labels | allocation | coverage, former | coverage, now | "
        "regressed, former | regressed, now | median width (former, now) |"
        "\n|---|---|---|---|---|---|---|---|"
    )
    world = World(cells=40, repeats=5, false_pass=LENIENT[0], false_fail=LENIENT[1])
    for drop, rates in ((30, DROP), (15, SMALL_DROP)):
        for share, kind in ((0.10, "proportional"), (0.10, "neyman"), (0.25, "proportional")):
            covered = {"former": 0, "now": 0}
            called = {"former": 0, "now": 0}
            widths: dict[str, list[float]] = {"former": [], "now": []}
            for t in range(trials):
                seed = 10_000 + t
                b, c = pair(world, BASE, rates, seed)
                cell_effects = effects(world, seed)
                truth = expected_score(rates, cell_effects) - expected_score(BASE, cell_effects)
                labels = _labels(b, c, _n(world, share), t, kind)
                results = {"now": compare_grades(b, c, labels=pd.concat(labels))}
                if kind == "proportional":  # the former method had no Neyman top-up
                    results["former"] = _former(b, c, labels)
                for key, result in results.items():
                    row = result.summary.iloc[0]
                    covered[key] += row["difference_low"] <= truth <= row["difference_high"]
                    called[key] += result.verdict.value == "regressed"
                    widths[key].append(row["difference_high"] - row["difference_low"])
            old = bool(widths["former"])
            old_width = f"{np.median(widths['former']):.1f}" if old else "-"
            print(
                f"| {drop} | {share:.0%} | {kind} | "
                f"{_rate(covered['former'], trials) if old else '-'} | "
                f"{_rate(covered['now'], trials)} | "
                f"{_rate(called['former'], trials) if old else '-'} | "
                f"{_rate(called['now'], trials)} | "
                f"{old_width}, "
                f"{np.median(widths['now']):.1f} |",
                flush=True,
            )


def _rule_width(world: World, labels_share: float, seed: int, lam: float | None) -> float:
    """Width (points) of one rule's PPI++ pass-rate interval on one side."""
    b, _ = pair(world, BASE, BASE, seed)
    queue = label_queue(b, options=LabelOptions(n=_n(world, labels_share), seed=seed))
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
    print(
        "\nWidth, judge agreeing 90% with people (false-pass = false-fail = 10%), one judged "
        f"rule's pass rate, 300 conversations; {trials} trials\n"
    )
    print("| labelled | PPI++ width | labels-alone width | ratio |\n|---|---|---|---|")
    for share, p, a in rows:
        print(f"| {share:.0%} ({int(share * 600 / 2)} of 300) | {p:.1f} | {a:.1f} | {p / a:.2f} |")
    print(
        f"| PPI++ with 45 labels vs labels alone with 75 (40% fewer) | {rows[0][1]:.1f} | "
        f"{rows[1][2]:.1f} | {rows[0][1] / rows[1][2]:.2f} |"
    )


def perfect(trials: int) -> None:
    world = World(cells=60, repeats=5, false_pass=0.0, false_fail=0.0)
    ratios = []
    for t in range(trials):
        b, c = pair(world, BASE, DROP, 40_000 + t)
        labels = pd.concat(_labels(b, c, _n(world, 0.25), t))
        fixed = compare_grades(b, c, labels=labels).summary.iloc[0]
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
                f"| {n} | {accuracy:.0%} | {100 * all_agree / trials:.1f}% | "
                f"{100 * cover['a'] / trials:.1f}% | "
                f"{100 * cover['f'] / max(counted['f'], 1):.1f}% ({counted['f']}) | "
                f"{100 * cover['k'] / max(counted['k'], 1):.1f}% ({counted['k']}) | {zero} |"
            )


SECTIONS: dict[str, Callable[[int], None]] = {
    "false-claims": false_claims,
    "allocation": lambda t: allocation(max(t // 2, 10)),
    "coverage": lambda t: coverage_and_power(max(t // 4, 10)),
    "width": lambda t: width(max(t // 10, 10)),
    "perfect": lambda t: perfect(max(t // 40, 10)),
    "agreement": lambda t: agreement(max(t // 10, 10)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000, help="trials of the A/A row")
    parser.add_argument(
        "--only", choices=sorted(SECTIONS), action="append", help="run only this table"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    for name in args.only or list(SECTIONS):
        SECTIONS[name](args.trials)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
