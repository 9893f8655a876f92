"""The viewer's pages as HTML text, rendered from templates shipped with the package; the
live server and the static bundle call the same functions (``live`` adds label forms, play
controls and refreshing)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from jinja2 import Environment
from markupsafe import Markup

from .._util import environment as html_environment
from .._util import render_html
from .._version import __version__
from ..report import (
    Filters,
    TranscriptOptions,
    anchor_id,
    filter_conversations,
    record_text,
    run_voice,
    searchable_text,
    transcript_html,
    urdu_html,
)
from ..store import LABEL_VALUES
from ._paths import compare_path, history_path, run_path, seg
from ._site import RunData, Site

__all__ = ["Pages", "environment"]

logger = logging.getLogger("evalkit.view")

VERDICTS = ("pass", "fail", "na", "error")
TRANSCRIPT_ANCHOR = "turn"


def environment() -> Environment:
    """The one template environment (``evalkit/templates``, HTML autoescaped)."""
    env: Environment = html_environment()
    return env


def _fmt(value: Any, spec: str = ".0f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "–"
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)


def _count(value: Any) -> str:
    return "–" if value is None or pd.isna(value) else str(int(value))


def _text(value: Any) -> str | None:
    """A catalog cell as text; None when it is missing (None, NaN, NA or empty)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value) or None


def _cost(total: Any, currency: Any) -> str | None:
    """``"USD 1,234.50"``: what a run cost with a price table; None when it ran without one."""
    if not isinstance(total, int | float) or pd.isna(total):
        return None
    unit = f"{_text(currency)} " if _text(currency) else ""
    return f"{unit}{total:,.2f}"


def _latency(quantiles: Mapping[str, float]) -> str | None:
    """``"0.98 / 2.5 s"``: agent latency p50 / p95; None without turn timing."""
    p50, p95 = quantiles.get("p50"), quantiles.get("p95")
    if p50 is None or p95 is None or pd.isna(p50) or pd.isna(p95):
        return None
    return f"{p50:.3g} / {p95:.3g} s"


def _with_interval(frame: pd.DataFrame, name: str) -> list[str]:
    return [
        f"{_fmt(v, '.2f')} [{_fmt(lo, '.2f')}, {_fmt(hi, '.2f')}]"
        if not pd.isna(lo)
        else _fmt(v, ".2f")
        for v, lo, hi in zip(frame[name], frame[f"{name}_low"], frame[f"{name}_high"], strict=True)
    ]


@dataclass
class Pages:
    """Renders pages of ``site``; ``live`` pages carry label forms (with ``form_token``) and
    play controls, and pages of a running run refresh every ``refresh_s`` seconds."""

    site: Site
    live: bool
    form_token: str = ""
    labeller: str = ""
    refresh_s: float = 3.0
    page_size: int = 200

    def __post_init__(self) -> None:
        self.env = environment()

    def render(self, template: str, root: str, **context: Any) -> str:
        base = {
            "root": root,
            "live": self.live,
            "store": self.site.label,
            "version": __version__,
            "refresh": None,
            "crumbs": [],
        }
        return self.env.get_template(template).render({**base, **context})

    # ------------------------------------------------------------------ index
    def index(
        self,
        comparisons: list[tuple[str, str]] | None = None,
        searches: list[tuple[str, str]] | None = None,
    ) -> str:
        frame = self.site.catalog()
        rows = [
            self._run_row(row, self.site.latency(str(row["run_id"]), row.get("finished_at")))
            for row in frame.to_dict("records")
        ]
        for previous, row in zip([None, *rows[:-1]], rows, strict=True):
            if previous is not None and self._comparable(previous, row):
                row["previous"] = previous["run_id"]
                row["pair"] = self.orient(previous, row)
                row["compare_href"] = compare_path(*row["pair"])
        if not self.live and comparisons is not None:
            rows = [
                {**r, "compare_href": None} if r["pair"] not in comparisons else r for r in rows
            ]
        running = self.live and any(r["running"] for r in rows)
        return self.render(
            "view/index.html",
            "",
            title="Runs",
            refresh=f"{3 * self.refresh_s:g}" if running else None,  # the catalog costs more
            runs=rows,
            with_cost=any(r["cost"] is not None for r in rows),
            suggested=self._suggested(rows),
            comparisons=[(compare_path(a, b), f"{a} → {b}") for a, b in (comparisons or [])],
            histories=self._histories(frame),
            searches=searches or [],
        )

    @staticmethod
    def orient(older: Mapping[str, Any], newer: Mapping[str, Any]) -> tuple[str, str]:
        """``(baseline, candidate)`` of two runs (catalog rows, oldest first): the run of
        target ``prod`` against a run of another target, else the older run first."""
        if newer.get("target") == "prod" and older.get("target") != "prod":
            return str(newer["run_id"]), str(older["run_id"])
        return str(older["run_id"]), str(newer["run_id"])

    @classmethod
    def _suggested(cls, rows: list[dict[str, Any]]) -> tuple[str, str] | None:
        """The pair the compare form starts with: the newest comparable pair, else the two
        newest runs (each oriented by :meth:`orient`)."""
        paired = [r["pair"] for r in rows if r["pair"] is not None]
        if paired:
            baseline, candidate = paired[-1]
            return str(baseline), str(candidate)
        return cls.orient(rows[-2], rows[-1]) if len(rows) >= 2 else None

    @staticmethod
    def _comparable(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return bool(a["rubrics"]) and a["rubrics"] == b["rubrics"] and a["grid"] == b["grid"]

    @staticmethod
    def _run_row(
        row: Mapping[Any, Any], latency: Mapping[str, float] | None = None
    ) -> dict[str, Any]:
        """A catalog row as the runs table shows it; ``latency``: the run's agent p50/p95."""
        scores = [v for k, v in row.items() if k.startswith("mean_score.") and not pd.isna(v)]
        total, done = row.get("conversations"), row.get("done")
        not_done = None if total is None or pd.isna(total) else int(total) - int(done or 0)
        started = row.get("started_at")
        return {
            "run_id": str(row["run_id"]),
            "href": run_path(str(row["run_id"])),
            "started": "–" if pd.isna(started) else started.strftime("%Y-%m-%d %H:%M"),
            "target": row.get("target") or "–",
            "assistant": _text(row.get("assistant_id")) or "–",
            "assistant_id": row.get("assistant_id"),
            "assistant_name": _text(row.get("assistant_name")),
            "version": _count(row.get("assistant_version")),
            "running": pd.isna(row.get("finished_at")),
            "outcome": row.get("outcome") or "–",
            "conversations": _count(total),
            "done": _count(done),
            "not_done": _count(not_done),
            "rubrics": _text(row.get("rubrics")) or "",
            "grid": row.get("grid_identity"),
            "score": ", ".join(_fmt(s, ".1f") for s in scores) or "–",
            "latency": _latency(latency or {}),
            "cost": _cost(row.get("cost"), row.get("cost_currency")),
            "compare_href": None,
            "previous": None,
            "pair": None,
        }

    @staticmethod
    def history_assistants(frame: pd.DataFrame) -> dict[str, int]:
        """Assistants with at least two graded runs -> how many."""
        graded = frame[frame["rubrics"].notna() & frame["assistant_id"].notna()]
        counts = graded.groupby("assistant_id").size()
        return {str(a): int(n) for a, n in counts.items() if n >= 2}

    def _histories(self, frame: pd.DataFrame) -> list[tuple[str, str]]:
        named = frame.dropna(subset=["assistant_name"]).groupby("assistant_id")["assistant_name"]
        names = {str(a): str(n.iloc[-1]) for a, n in named}  # the newest name
        return [
            (
                history_path(a),
                f"{names[a]} ({a}, {n} graded runs)" if a in names else f"{a} ({n} graded runs)",
            )
            for a, n in self.history_assistants(frame).items()
        ]

    # ------------------------------------------------------------------ a run
    def run(self, run_id: str, filters: Filters | None = None, offset: int = 0) -> str:
        data = self.site.run(run_id)
        f = filters or Filters()
        conv = data.conversations
        text = searchable_text(conv, data.run.turns) if (f.text or not self.live) else None
        ids = filter_conversations(conv, data.grades, f, text) if self.live else list(conv.index)
        start = max(0, offset) if self.live else 0
        shown = ids[start : start + self.page_size] if self.live else ids
        more = None
        if self.live and start + self.page_size < len(ids):
            query = "&".join(f"{k}={seg(v)}" for k, v in f.as_dict().items() if v)
            more = f"index.html?offset={start + self.page_size}" + (f"&{query}" if query else "")
        labels = data.labels()
        counts = labels.groupby("conversation_id").size() if len(labels) else pd.Series()
        rows = [self._conv_row(data, cid, text, int(counts.get(cid, 0))) for cid in shown]
        rules = data.grades.drop_duplicates("rule_id")[["rule_id", "title"]].itertuples(index=False)
        return self.render(
            "view/run.html",
            "../../",
            title=f"Run {run_id}",
            crumbs=[("../../index.html", "runs"), (None, run_id)],
            refresh=self._refresh(data),
            run_id=run_id,
            about=self._about(data),
            agreement=self._agreement(data, labels),
            filters=f,
            personas=sorted(str(p) for p in pd.unique(conv["persona_label"].dropna())),
            statuses=sorted(str(s) for s in pd.unique(conv["status"].dropna())),
            rules=[(str(r.rule_id), str(r.title)) for r in rules],
            verdicts=VERDICTS,
            conversations=rows,
            shown=len(shown),
            total=len(conv),
            more=more,
        )

    def _refresh(self, data: RunData) -> str | None:
        return f"{self.refresh_s:g}" if self.live and data.running else None

    @staticmethod
    def _about(data: RunData) -> str:
        m = data.run.manifest
        snapshot = m.get("config_snapshot")
        name = snapshot.get("name") if isinstance(snapshot, dict) else None
        assistant = f"{name} ({m.get('assistant_id', '–')})" if name else m.get("assistant_id", "–")
        parts = [
            f"target {m.get('target', '–')}",
            f"assistant {assistant} v{m.get('assistant_version', '–')}",
            f"started {str(m.get('created_at', '–'))[:16].replace('T', ' ')}",
            f"scorecard {data.rubric}" if data.rubric else "not graded",
        ]
        from ..compare import latency_quantiles

        latency = latency_quantiles(data.run)
        if not pd.isna(latency["p50"]):
            parts.append(f"agent latency p50 {latency['p50']:.3g} s, p95 {latency['p95']:.3g} s")
        cost = m.get("cost")
        spent = _cost(cost.get("total"), cost.get("currency")) if isinstance(cost, dict) else None
        if spent is not None:
            parts.append(f"cost {spent}")
        if data.running:
            parts.append("still running")
        return " · ".join(parts)

    def _agreement(self, data: RunData, labels: pd.DataFrame) -> Markup | None:
        if labels.empty or data.grades.empty:
            return None
        from ..grading import AgreementOptions, judge_agreement
        from ..report import table_html

        frame = judge_agreement(
            data.run.grades(data.rubric), labels, options=AgreementOptions(n_resamples=1000)
        )
        shown = pd.DataFrame(
            {
                "rule": frame["rule_id"],
                "labelled": frame["n_labelled"],
                "compared": frame["n"],
                "accuracy [95% CI]": _with_interval(frame, "accuracy"),
                "F1 of fail [95% CI]": _with_interval(frame, "f1_fail"),
                "Cohen's kappa [95% CI]": _with_interval(frame, "kappa"),
            }
        )
        return Markup(table_html(shown))

    def _conv_row(
        self, data: RunData, cid: str, text: Mapping[str, str] | None, n_labels: int
    ) -> dict[str, Any]:
        row = data.conversations.loc[cid]
        grades = data.grades_of(cid)
        verdicts = list(
            zip(grades["rule_id"].astype(str), grades["verdict"].astype(str), strict=True)
        )
        return {
            "id": cid,
            "href": f"c/{seg(cid)}.html",
            "persona": str(row["persona_label"]),
            "variables": record_text(row["variables"])[:60],
            "status": str(row["status"]),
            "turns": _count(row["n_turns"]),
            "score": _fmt(data.scores.get(cid)),
            "verdicts": [(r, v) for r, v in verdicts if v != "pass"],
            "verdict_keys": " ".join(f"{r}={v}" for r, v in verdicts),
            "text": (text or {}).get(cid, "") if not self.live else "",
            "labels": n_labels or "",
        }

    # ------------------------------------------------------------------ a transcript
    def conversation(self, run_id: str, cid: str) -> str:
        data = self.site.run(run_id)
        if cid not in data.conversations.index:
            raise KeyError(f"no conversation {cid!r} in run {run_id}")
        row = data.conversations.loc[cid]
        grades = data.grades_of(cid)
        order = list(data.conversations.index)
        at = order.index(cid)
        labels = data.labels()
        mine = (
            labels[labels["conversation_id"] == cid].set_index("rule_id") if len(labels) else None
        )
        voice, phrase_config = run_voice(data.run.manifest)
        turns = data.turns_of(cid)
        after = self._players(cid, turns) if self.live else {}
        transcript = transcript_html(
            turns,
            grades,
            TranscriptOptions(anchor=TRANSCRIPT_ANCHOR, rules=False, after_turn=after),
        )
        return self.render(
            "view/conversation.html",
            "../../../",
            title=f"{cid} · {run_id}",
            crumbs=[("../../../index.html", "runs"), ("../index.html", run_id), (None, cid)],
            run_id=run_id,
            cid=cid,
            cid_file=seg(cid),
            persona=str(row["persona_label"]),
            status=str(row["status"]),
            score=_fmt(data.scores.get(cid)) if cid in data.scores.index else None,
            variables=record_text(row["variables"]),
            prev=f"{seg(order[at - 1])}.html" if at > 0 else None,
            next=f"{seg(order[at + 1])}.html" if at + 1 < len(order) else None,
            rubric=data.rubric,
            rules=[self._rule_row(g, mine) for g in grades.to_dict("records")],
            label_values=LABEL_VALUES,
            form_token=self.form_token,
            labeller=self.labeller,
            voice=voice,
            phrase_config=phrase_config,
            transcript=Markup(transcript),
        )

    @staticmethod
    def _players(cid: str, turns: pd.DataFrame) -> dict[int, str]:
        agent = turns[turns["role"] == "agent"]
        return {
            int(i): render_html(
                "audio.html",
                cls="vw-play",
                preload="none",
                src=f"../audio/{seg(cid)}/{int(i)}.mp3",
                title=f"play turn {int(i)}",
            )
            for i in agent["index"]
        }

    @staticmethod
    def _rule_row(grade: Mapping[Any, Any], labels: pd.DataFrame | None) -> dict[str, Any]:
        rule_id = str(grade["rule_id"])
        turn = grade.get("evidence_turn")
        label = None
        if labels is not None and rule_id in labels.index:
            item = labels.loc[rule_id]
            label = {
                "label": item["label"],
                "labelled_by": item["labelled_by"],
                "note": item["note"],
                "when": str(item["labelled_at"])[:16].replace("T", " "),
            }
        has_turn = turn is not None and not pd.isna(turn)
        number = int(turn) if has_turn and turn is not None else None
        return {
            "rule_id": rule_id,
            "anchor": seg(rule_id),
            "verdict": str(grade["verdict"]),
            "grader": str(grade.get("grader") or ""),
            # a deterministic check is right or wrong as a check, never as a "judge"
            "grader_kind": "check"
            if str(grade.get("grader") or "").startswith("check:")
            else "judge",
            "title": Markup(urdu_html(str(grade.get("title") or rule_id))),
            "rationale": Markup(urdu_html(str(grade.get("rationale") or ""))),
            "evidence": anchor_id(TRANSCRIPT_ANCHOR, number) if number is not None else None,
            "evidence_turn": number,
            "label": label,
        }
