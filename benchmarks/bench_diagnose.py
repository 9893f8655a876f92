"""Benchmark: failure clusters over 10k failing conversations (target < 10 s), against a bare
TF-IDF + k-means on the same texts in the same run.

The failing conversations are synthesised from phrase pools like the emulator's: Roman Urdu
answers (the draft's regression), Nastaliq answers drifting into Roman Urdu, English answers
and Nastaliq answers that never ask to confirm, with contact names, dates, an opening and a
filler clause varying, and two words dropped at random, so nearly every text is distinct
(evalkit vectorises identical texts once; a benchmark of duplicates would flatter it). The
bare baseline is what anyone would write first: ``TfidfVectorizer(analyzer="char_wb")`` and
one ``MiniBatchKMeans`` with k fixed in advance; evalkit also picks k by silhouette, masks
contact words, labels clusters and counts sides.

Usage::

    python benchmarks/bench_diagnose.py                      # 10k failing conversations
    python benchmarks/bench_diagnose.py --conversations 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import pandas as pd

from evalkit.diagnose import failure_clusters

NAMES = ["Ayesha Khan", "Bilal Ahmed", "Fatima Noor", "Omar Shah", "Hina Raza", "Zara Malik"]
URDU = ["عائشہ خان", "بلال احمد", "فاطمہ نور", "عمر شاہ", "حنا رضا", "زارا ملک"]
MODES = [
    "Assalam o alaikum {en} ji, main Sana hoon. Aap ki appointment {d} November ko {t} baje hai.",
    "Aap ki appointment Dr. Farooq ke saath {d} November ko hai, {en} ji, shukriya.",
    "السلام علیکم {ur} جی، آپ کی اپائنٹمنٹ {d} نومبر کو {t} بجے ہے۔ Kya aap tashreef la sakenge?",
    "Hello {en}, this is Sana from the clinic: your visit is on {d} November at {t}.",
    "آداب {ur} جی، میں ثنا ہوں، آپ کی اپائنٹمنٹ {d} نومبر کو ہے۔ شکریہ، اللہ حافظ۔",
]


FILLERS = [
    ["Ji bilkul.", "Theek hai.", "Acha ji.", "Zaroor.", "Bas yehi batana tha.", "Koi masla nahi."],
    ["جی بالکل۔", "ٹھیک ہے۔", "اچھا جی۔", "ضرور۔", "بس یہی بتانا تھا۔", "کوئی مسئلہ نہیں۔"],
    ["Sure.", "Okay then.", "Right.", "Of course.", "That is all.", "No problem at all."],
]


def _one(rng: np.random.Generator, mode: int, person: int) -> str:
    text = MODES[mode].format(
        en=NAMES[person], ur=URDU[person], d=int(rng.integers(1, 28)), t=int(rng.integers(1, 12))
    )
    pool = FILLERS[0 if mode in (0, 1) else 1 if mode in (2, 4) else 2]
    words = f"{pool[int(rng.integers(0, 6))]} {text} {pool[int(rng.integers(0, 6))]}".split()
    for _ in range(2):
        del words[int(rng.integers(0, len(words)))]
    return " ".join(words)


def synthesise(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``n`` failing grades of one rule, their turns and conversations."""
    rng = np.random.default_rng(seed)
    mode = rng.integers(0, len(MODES), n)
    person = rng.integers(0, len(NAMES), n)
    ids = [f"c{i // 3:05d}-{i % 3}" for i in range(n)]
    texts = [_one(rng, int(m), int(p)) for m, p in zip(mode, person, strict=True)]
    grades = pd.DataFrame(
        {
            "run_id": "draft",
            "conversation_id": ids,
            "cell_id": [i.rsplit("-", 1)[0] for i in ids],
            "rule_id": "urdu-script",
            "verdict": "fail",
            "rationale": "0% of agent letters are Arabic script (needs 80%)",
            "evidence_turn": 1,
        }
    )
    turns = pd.DataFrame(
        {"run_id": "draft", "conversation_id": ids, "index": 1, "role": "agent", "text": texts}
    )
    conversations = pd.DataFrame(
        {
            "run_id": "draft",
            "conversation_id": ids,
            "variables": [json.dumps({"customer_name": NAMES[p]}) for p in person],
        }
    )
    return grades, turns, conversations


def mode_of(n: int, seed: int = 0) -> np.ndarray:
    """The planted phrasing of each synthesised conversation (the first draw of the rng)."""
    return np.random.default_rng(seed).integers(0, len(MODES), n)


def bare(turns: pd.DataFrame, k: int, seed: int) -> None:
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    x = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(
        turns["text"]
    )
    MiniBatchKMeans(n_clusters=k, random_state=seed, n_init=3, batch_size=1024).fit(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    grades, turns, conversations = synthesise(args.conversations)
    import sklearn.cluster  # noqa: F401  (imports are not part of either timing)

    ours, baseline, ours_cpu, bare_cpu = [], [], [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        clusters = failure_clusters(grades, turns, conversations=conversations)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        bare(turns, len(clusters), 0)
        baseline.append(time.perf_counter() - start)
        bare_cpu.append(time.process_time() - cpu)
    ours_s, bare_s = statistics.median(ours), statistics.median(baseline)
    print(f"load average (1 min)           {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    print(f"failing conversations          {args.conversations}")
    print(f"distinct texts                 {turns['text'].nunique()}")
    print(
        f"clusters found                 {len(clusters)} (planted failure phrasings: {len(MODES)})"
    )
    print(f"failure_clusters (median of {args.repeat}) {ours_s:8.2f} s wall "
          f"{statistics.median(ours_cpu):6.2f} s CPU   target < 10 s")  # fmt: skip
    print(f"bare TF-IDF + MiniBatchKMeans  {bare_s:8.2f} s wall "
          f"{statistics.median(bare_cpu):6.2f} s CPU")  # fmt: skip
    print(f"ratio (wall)                   {ours_s / bare_s:8.2f}x")
    print(clusters[["cluster", "label", "conversations"]].to_string(index=False))
    members = clusters.attrs["members"].set_index("conversation_id")["cluster"]
    planted = pd.Series(mode_of(args.conversations), index=grades["conversation_id"])
    purity = pd.crosstab(members, planted.reindex(members.index)).max(axis=1).sum() / len(members)
    print(f"purity against the planted phrasings {purity:.3f}")


if __name__ == "__main__":
    main()
