"""``failure_clusters``: failing conversations grouped by what failed, per rule.

Method (no model downloads, the same for Nastaliq, Roman Urdu and English): each failing
conversation x rule is a text (:mod:`._documents`); character n-grams (2-4, within word
boundaries; scikit-learn's ``TfidfVectorizer(analyzer="char_wb")``, sublinear tf) make it a
vector whatever the script or spelling (identical texts are vectorised once and weighted);
large sets are reduced by a seeded truncated SVD (LSA, Deerwester et al. 1990) and clustered
by seeded k-means fitted on a seeded sample of at most 2,000 texts, the number of clusters
chosen by the silhouette (Rousseeuw 1987) over 2..``max_clusters`` on that sample (the fewest
within 0.03 of the best), then every text assigned to its nearest centre; one cluster when no
split reaches ``min_silhouette``. Each cluster's label is its most distinctive words (share in
the cluster against the rule's other failures), never a word of the variables records' values
(:mod:`._record_values`: from ``conversations`` or the stored run of the grades). Before
clustering, words found under one contact record only (names, places, their transliterations)
are masked when ``conversations`` gives each failure's record, the records' values otherwise,
so clusters do not split by contact.

With ``baseline`` grades both sides are clustered together, so a cluster counts each side:
``new_in_candidate`` are candidate failures in cells where the baseline passed the rule in every
graded repeat, ``fixed_in_candidate`` baseline failures in cells where the candidate passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # grading brings scipy: `evalkit lint FILE` must not import it
    from ..grading import GradesLike
from ._documents import failing_documents, grades_frame
from ._record_values import mask_words, record_value_words
from ._traits import arabic_share

__all__ = ["CLUSTER_COLUMNS", "ClusterOptions", "cluster_members", "failure_clusters"]

CLUSTER_COLUMNS: Final = (
    "rule_id",
    "cluster",
    "label",
    "script",
    "conversations",
    "share",
    "conversations_baseline",
    "conversations_candidate",
    "new_in_candidate",
    "fixed_in_candidate",
    "example_ids",
)
MEMBER_COLUMNS: Final = (
    "rule_id",
    "cluster",
    "label",
    "side",
    "run_id",
    "conversation_id",
    "cell_id",
)
SAMPLE_FOR_SILHOUETTE: Final = 2000
PARSIMONY: Final = 0.03
"""A split with more clusters must beat a smaller one's silhouette by this much."""


@dataclass(frozen=True)
class ClusterOptions:
    """Options of :func:`failure_clusters`: ``seed`` of the SVD, the k-means and the
    silhouette sample (the same inputs and seed give the same clusters); ``max_clusters`` per
    rule; ``min_silhouette``: below it a rule's failures stay one cluster; ``svd_components``
    (used above ``svd_above`` texts); ``label_words``."""

    seed: int = 0
    max_clusters: int = 6
    min_silhouette: float = 0.12
    svd_components: int = 48
    svd_above: int = 300
    label_words: int = 3

    def __post_init__(self) -> None:
        if self.max_clusters < 1:
            raise ValueError(f"max_clusters must be >= 1, got {self.max_clusters}")


_WORD_RE: Final = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_RECORDS_TO_MASK: Final = 3


def mask_record_words(texts: list[str], records: list[str]) -> list[str]:
    """``texts`` without the words of one variables record (names, clinics, their
    transliterations): a word found under one record only, in at least half of that record's
    texts (and two or more), when the texts span at least three records. Such words tell
    contacts apart, not failures."""
    if len(set(records)) < MIN_RECORDS_TO_MASK:
        return texts
    per_record: dict[str, int] = {}
    seen: dict[str, dict[str, int]] = {}
    for text, record in zip(texts, records, strict=True):
        per_record[record] = per_record.get(record, 0) + 1
        for word in set(_WORD_RE.findall(text)):
            where = seen.setdefault(word, {})
            where[record] = where.get(record, 0) + 1
    specific = {
        word
        for word, where in seen.items()
        if len(where) == 1
        and (n := next(iter(where.values()))) >= 2
        and n * 2 >= per_record[next(iter(where))]
    }
    if not specific:
        return texts
    return [_WORD_RE.sub(lambda m: " " if m.group(0) in specific else m.group(0), t) for t in texts]


def _vectors(texts: list[str], seed: int, opts: ClusterOptions) -> Any:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    tfidf = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, dtype=np.float32,
        max_features=1 << 16,
    )  # fmt: skip
    x = tfidf.fit_transform(texts)
    if len(texts) > opts.svd_above and x.shape[1] > opts.svd_components:
        svd = TruncatedSVD(n_components=opts.svd_components, random_state=seed)
        return normalize(svd.fit_transform(x))
    return x.toarray()


def _kmeans(z: Any, k: int, seed: int, weight: Any) -> Any:
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, random_state=seed, n_init=3).fit(z, sample_weight=weight)


def _split(
    z: Any, weight: np.ndarray[Any, Any], seed: int, opts: ClusterOptions
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Cluster numbers per row of ``z`` (distinct texts, ``weight``: how many failures each
    stands for): k-means fitted on a seeded sample of at most ``SAMPLE_FOR_SILHOUETTE`` rows
    for each k, scored by silhouette on that sample; the fewest clusters within
    ``PARSIMONY`` of the best k's score, then every row assigned to its nearest centre. All
    0 when no split reaches ``min_silhouette``."""
    from sklearn.metrics import silhouette_score

    n = len(z)
    rng = np.random.default_rng(seed)
    rows = (
        np.sort(rng.choice(n, SAMPLE_FOR_SILHOUETTE, replace=False))
        if n > SAMPLE_FOR_SILHOUETTE
        else np.arange(n)
    )
    sample, sample_weight = z[rows], weight[rows]
    scored: list[tuple[int, float, Any]] = []
    for k in range(2, min(opts.max_clusters, len(rows) - 1) + 1):
        model = _kmeans(sample, k, seed, sample_weight)
        if len(set(model.labels_)) < 2:
            continue
        scored.append((k, float(silhouette_score(sample, model.labels_)), model))
    best = max((score for _, score, _ in scored), default=-1.0)
    if best < opts.min_silhouette:
        return np.zeros(n, dtype=np.int64)
    _k, _score, model = next(item for item in scored if item[1] >= best - PARSIMONY)
    return np.asarray(model.predict(z), dtype=np.int64)


def _words(texts: list[str]) -> tuple[Any, np.ndarray[Any, Any]]:
    from sklearn.feature_extraction.text import CountVectorizer

    counts = CountVectorizer(
        token_pattern=r"(?u)\b[^\W\d_]{3,}\b", binary=True, max_features=1 << 15
    )
    try:
        return counts.fit_transform(texts), counts.get_feature_names_out()
    except ValueError:  # no word at all (only digits or punctuation)
        return None, np.array([])


def _label(
    in_cluster: np.ndarray[Any, Any], matrix: Any, vocab: np.ndarray[Any, Any], n: int
) -> str:
    if matrix is None or not len(vocab):
        return "(no words)"
    share_in = np.asarray(matrix[in_cluster].mean(axis=0)).ravel()
    share_all = np.asarray(matrix.mean(axis=0)).ravel()
    # one cluster: the words most of its failures share; else the ones that set it apart
    score = share_in if in_cluster.all() else share_in * (share_in - share_all + 1e-3)
    top = [i for i in np.argsort(-score, kind="stable")[:n] if share_in[i] > 0]
    return " · ".join(str(vocab[i]) for i in top) or "(no words)"


def _examples(
    z: Any,
    inverse: np.ndarray[Any, Any],
    members: np.ndarray[Any, Any],
    prefer: np.ndarray[Any, Any],
    ids: np.ndarray[Any, Any],
) -> list[str]:
    """Two conversation ids nearest the cluster's centre (the preferred side first); ``z``
    holds one row per distinct text, ``inverse`` maps each failure to its row."""
    rows = np.flatnonzero(members & prefer)
    if not len(rows):
        rows = np.flatnonzero(members)
    used, weight = np.unique(inverse[rows], return_counts=True)
    centre = np.average(z[used], axis=0, weights=weight)
    distance = dict(zip(used.tolist(), ((z[used] - centre) ** 2).sum(axis=1).tolist(), strict=True))
    ranked = sorted(rows.tolist(), key=lambda i: (distance[int(inverse[i])], i))
    chosen: list[str] = []
    for i in ranked:
        if str(ids[i]) not in chosen:
            chosen.append(str(ids[i]))
        if len(chosen) == 2:
            break
    return chosen


def _script(texts: list[str], members: np.ndarray[Any, Any]) -> str:
    """``Urdu script``, ``Latin script`` or ``mixed scripts``: the letters of a cluster's
    failing turns (a Roman-Urdu regression shows as Latin script)."""
    chosen = [t.split(" | ", 1)[-1] for t, m in zip(texts, members, strict=True) if m]
    share = arabic_share(" ".join(chosen[:200]))
    return "Urdu script" if share >= 0.8 else "Latin script" if share <= 0.2 else "mixed scripts"


def _cells_passing(grades: pd.DataFrame | None, rule: str) -> set[str]:
    """Cells where ``rule`` was graded and never failed."""
    if grades is None:
        return set()
    rows = grades[(grades["rule_id"] == rule) & grades["verdict"].isin(["pass", "fail"])]
    if rows.empty:
        return set()
    cells = (
        rows["cell_id"]
        if "cell_id" in rows
        else rows["conversation_id"].str.rsplit("-", n=1).str[0]
    )
    failed = rows["verdict"].eq("fail").groupby(cells.astype(str)).any()
    return set(failed.index[~failed])


def _one_rule(
    docs: pd.DataFrame,
    sides: tuple[pd.DataFrame | None, pd.DataFrame],
    seed: int,
    opts: ClusterOptions,
    values: frozenset[str] = frozenset(),
    by_record: bool = False,
) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    rule = str(docs["rule_id"].iloc[0])
    raw = docs["text"].tolist()
    # with each failure's own record known, words of one record are masked for clustering;
    # without, the records' values are (else clusters split by contact)
    texts = mask_record_words(
        raw if by_record else mask_words(raw, values), docs["record"].astype(str).tolist()
    )
    distinct, inverse, counts = np.unique(
        np.asarray(texts, dtype=object), return_inverse=True, return_counts=True
    )
    if len(distinct) >= 3:
        z_distinct = _vectors([str(t) for t in distinct], seed, opts)
        labels = _split(z_distinct, counts.astype(float), seed, opts)[inverse]
    else:
        z_distinct, labels = np.zeros((len(distinct), 1)), np.zeros(len(texts), dtype=np.int64)
    matrix, vocab = _words(mask_words(texts, values))  # no record value is a label word
    side = docs["side"].to_numpy()
    candidate = side == "candidate"
    cells = docs["cell_id"].to_numpy()
    base_ok, cand_ok = _cells_passing(sides[0], rule), _cells_passing(sides[1], rule)
    sizes = {
        int(c): (int((candidate & (labels == c)).sum()), int((labels == c).sum()))
        for c in np.unique(labels)
    }
    order = sorted(sizes, key=lambda c: (-sizes[c][0], -sizes[c][1], c))
    renumber = {old: new for new, old in enumerate(order)}
    total = max(int(candidate.sum()), 1)
    rows, names = [], {}
    for old in order:
        members = labels == old
        n_cand = int((members & candidate).sum())
        n_base = int((members & ~candidate).sum())
        names[old] = _label(members, matrix, vocab, opts.label_words)
        rows.append(
            {
                "rule_id": rule,
                "cluster": renumber[old],
                "label": names[old],
                "script": _script(texts, members),
                "conversations": n_cand,
                "share": n_cand / total,
                "conversations_baseline": n_base if sides[0] is not None else pd.NA,
                "conversations_candidate": n_cand,
                "new_in_candidate": int(sum(1 for c in cells[members & candidate] if c in base_ok))
                if sides[0] is not None else pd.NA,
                "fixed_in_candidate": int(sum(1 for c in cells[members & ~candidate] if c in cand_ok))
                if sides[0] is not None else pd.NA,
                "example_ids": _examples(
                    z_distinct, inverse, members, candidate, docs["conversation_id"].to_numpy()
                ),
            }
        )  # fmt: skip
    members_frame = docs[["rule_id", "side", "run_id", "conversation_id", "cell_id"]].assign(
        cluster=[renumber[c] for c in labels], label=[names[c] for c in labels]
    )
    return rows, members_frame[list(MEMBER_COLUMNS)]


def failure_clusters(
    grades: GradesLike,
    turns: pd.DataFrame,
    baseline: GradesLike | None = None,
    conversations: pd.DataFrame | None = None,
    rules: Iterable[str] | None = None,
    *,
    options: ClusterOptions | None = None,
) -> pd.DataFrame:
    """Failing conversations grouped by what failed, one row per cluster of each rule.

    ``grades``: the candidate's :class:`~evalkit.Grades` (or frame); ``turns``: the turns of
    its run, and of the baseline's when ``baseline`` grades are given (``pd.concat`` both runs'
    turns: rows match on ``run_id`` and ``conversation_id``). ``rules``: the rules to cluster
    (None: every rule with a failure). Columns: ``rule_id``, ``cluster`` (0 = the most
    candidate failures), ``label`` (its distinctive words), ``script`` (of its failing turns: ``Urdu script``,
    ``Latin script`` or ``mixed scripts``), ``conversations`` (candidate
    failures in it) and ``share`` (of the rule's), ``conversations_baseline``,
    ``conversations_candidate``, ``new_in_candidate``, ``fixed_in_candidate`` (NA without a
    baseline; see the module), ``example_ids`` (two conversations near its centre).
    No word of the variables records' values (contact names, clinics) is a label word: the
    records are read from ``conversations`` (both runs', with ``variables``) when given, else
    from the runs the grades were read from (a stored :class:`~evalkit.Grades` knows its run,
    whose manifest holds the grid's records). So that clusters do not split by contact, the
    words found under one contact record only (names, places, their transliterations) are
    left out of clustering when ``conversations`` gives each failure's record, and the records'
    values are left out otherwise.
    ``attrs["members"]`` maps each failing conversation to its cluster
    (:func:`cluster_members`). ``options`` (a :class:`ClusterOptions`): the seed and the
    clustering's knobs; the same inputs and seed give the same clusters.
    """
    opts = options or ClusterOptions()
    cand = grades_frame(grades)
    base = None if baseline is None else grades_frame(baseline, "baseline")
    wanted = None if rules is None else {str(r) for r in rules}
    docs = failing_documents(cand, turns, "candidate", wanted, conversations)
    if base is not None:
        docs = pd.concat(
            [failing_documents(base, turns, "baseline", wanted, conversations), docs],
            ignore_index=True,
        )
    rows: list[dict[str, Any]] = []
    members: list[pd.DataFrame] = []
    values = record_value_words(conversations, grades, baseline)
    by_record = conversations is not None and "variables" in conversations.columns
    for _, group in docs.groupby("rule_id", sort=True):
        found, who = _one_rule(
            group.reset_index(drop=True), (base, cand), opts.seed, opts, values, by_record
        )
        rows += found
        members.append(who)
    frame = pd.DataFrame(rows, columns=list(CLUSTER_COLUMNS))
    frame.attrs["members"] = (
        pd.concat(members, ignore_index=True)
        if members
        else pd.DataFrame(columns=list(MEMBER_COLUMNS))
    )
    return frame


def cluster_members(
    clusters: pd.DataFrame,
    rule_id: str | None = None,
    cluster: int | None = None,
    side: str | None = None,
) -> pd.DataFrame:
    """The failing conversations of :func:`failure_clusters`' result, one row each (``rule_id``,
    ``cluster``, ``label``, ``side``, ``run_id``, ``conversation_id``, ``cell_id``), filtered
    by rule, cluster number and side (``"baseline"`` or ``"candidate"``) when given."""
    members = clusters.attrs.get("members")
    if not isinstance(members, pd.DataFrame):
        raise ValueError("not a failure_clusters result: attrs['members'] is missing")
    keep = pd.Series(True, index=members.index)
    if rule_id is not None:
        keep &= members["rule_id"] == rule_id
    if cluster is not None:
        keep &= members["cluster"] == cluster
    if side is not None:
        keep &= members["side"] == side
    return members[keep].reset_index(drop=True)
