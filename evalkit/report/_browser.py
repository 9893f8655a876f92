"""RunBrowser: filter, page through and read a run's conversations in Jupyter (ipywidgets 8).

Paging happens in Python: the widgets hold only the current page's rows and one transcript
(or one pair), so the notebook's widget state stays small however big the run is. Callbacks
only set widget values; nothing is printed. Without a kernel, drive the widgets directly::

    browser = RunBrowser(run, grades)
    browser.persona.value = "busy"
    browser.transcript_html.value      # the first busy conversation, rules highlighted
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from markupsafe import Markup

from .._util import render_html, stylesheet
from ..api import Client
from ..grading import GradesLike, as_grades_frame
from ..store import Run
from ._browser_controls import BrowserControls
from ._filters import ANY, Filters, filter_conversations, record_text, searchable_text
from ._frames import conversation_scores
from ._transcript_html import TranscriptOptions, side_by_side_html, table_html, transcript_html

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["RunBrowser"]

logger = logging.getLogger("evalkit.report")

_ALL = ANY
_VERDICTS = ("pass", "fail", "na", "error")
#: The filter row: as many columns of at least 260 px as fit, so nothing is clipped at any
#: notebook width (the controls wrap onto a second line instead).
_FILTER_COLUMNS = "repeat(auto-fill, minmax(260px, 1fr))"
_LABEL_WIDTH = "64px"


@dataclass(frozen=True)
class _Side:
    """One run's frames, indexed for quick lookups."""

    run: Run
    label: str
    conversations: pd.DataFrame  # indexed by conversation_id, in grid order
    grades: pd.DataFrame
    scores: pd.Series
    turn_rows: Mapping[str, Any]  # conversation_id -> row positions in run.turns
    grade_rows: Mapping[str, Any]  # conversation_id -> row positions in grades

    @classmethod
    def build(cls, run: Run, grades: GradesLike | None) -> _Side:
        graded = run.grades() if grades is None else as_grades_frame(grades)
        conv = run.conversations.sort_values(["cell_id", "repeat", "conversation_id"])
        target = run.manifest.get("target")
        label = f"{run.run_id} ({target})" if target and str(target) != run.run_id else run.run_id
        return cls(
            run=run,
            label=label,
            conversations=conv.set_index(conv["conversation_id"].astype(str), drop=False),
            grades=graded.reset_index(drop=True),
            scores=conversation_scores(graded) if len(graded) else pd.Series(dtype="float64"),
            turn_rows=_positions(run.turns),
            grade_rows=_positions(graded.reset_index(drop=True)),
        )

    def turns_of(self, cid: str) -> pd.DataFrame:
        rows = self.turn_rows.get(cid)
        return self.run.turns.iloc[rows] if rows is not None else self.run.turns.iloc[:0]

    def grades_of(self, cid: str) -> pd.DataFrame:
        rows = self.grade_rows.get(cid)
        return self.grades.iloc[rows] if rows is not None else self.grades.iloc[:0]

    def key(self, cid: str) -> tuple[str, str, int]:
        """``(conversation_id, cell_id, repeat)`` of one conversation here."""
        conv = self.conversations
        return cid, str(conv.at[cid, "cell_id"]), int(str(conv.at[cid, "repeat"]))

    def partner(self, key: tuple[str, str, int]) -> str | None:
        """The conversation here pairing with ``key`` of another run (same id, else same cell)."""
        cid, cell, repeat = key
        if cid in self.conversations.index:
            return cid
        conv = self.conversations
        same = conv[(conv["cell_id"] == cell) & (conv["repeat"] == repeat)]
        if same.empty:
            same = conv[conv["cell_id"] == cell]
        return str(same.index[0]) if len(same) else None

    def transcript(self, cid: str) -> str:
        row = self.conversations.loc[cid]
        score = self.scores.get(cid)
        scored = f" · score {score:.0f}" if score is not None and not pd.isna(score) else ""
        title = f"{self.label} · {cid} · {row['persona_label']} · {row['status']}{scored}"
        opts = TranscriptOptions(title=title, anchor=f"{self.run.run_id}-{cid}")
        return transcript_html(self.turns_of(cid), self.grades_of(cid), opts)


def _positions(frame: pd.DataFrame) -> dict[str, Any]:
    """conversation_id -> row positions in ``frame``."""
    if frame.empty:
        return {}
    groups = frame.groupby(frame["conversation_id"].astype(str).to_numpy()).indices
    return {str(k): v for k, v in groups.items()}


class RunBrowser:
    """Browse a run's conversations: filters, server-side paging, highlighted transcripts.

    ``grades`` (a ``Grades`` or its frame) defaults to ``run.grades()``. With ``comparison_run``, each transcript is shown
    next to the conversation of the same cell (same id, else same cell and repeat) in that run.
    With ``clusters`` (a :func:`evalkit.failure_clusters` result) a :attr:`cluster` filter
    keeps this run's members of one failure cluster (on top of any ``filters``).
    Widgets a test or notebook can drive: :attr:`persona`, :attr:`rule`, :attr:`verdict`,
    :attr:`status`, :attr:`search`, :attr:`conversation`, :attr:`prev_button`,
    :attr:`next_button`; outputs: :attr:`page_html`, :attr:`transcript_html`, :attr:`page_label`.
    :attr:`controls` (:class:`BrowserControls`) labels the shown conversation's rules (stored
    in the run's labels table) and plays its agent turns through ``client`` (default: one
    from the environment), in the voice the run recorded.
    """

    def __init__(
        self,
        run: Run,
        grades: GradesLike | None = None,
        *,
        comparison_run: Run | None = None,
        comparison_grades: GradesLike | None = None,
        page_size: int = 10,
        client: Client | None = None,
        clusters: pd.DataFrame | None = None,
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.page_size = page_size
        self.page = 0
        self.matches: list[str] = []
        self._main = _Side.build(run, grades)
        self._other = (
            _Side.build(comparison_run, comparison_grades) if comparison_run is not None else None
        )
        self._haystack: dict[str, str] | None = None
        self._clusters = clusters
        self._busy = False
        self._client = client
        self._build_widgets()
        self._refresh()

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        import ipywidgets as w

        conv = self._main.conversations
        grades = self._main.grades
        personas = sorted(str(p) for p in pd.unique(conv["persona_label"].dropna()))
        statuses = sorted(str(s) for s in pd.unique(conv["status"].dropna()))
        titles = (
            grades.drop_duplicates("rule_id").set_index("rule_id")["title"].astype(str)
            if len(grades)
            else pd.Series(dtype=str)
        )
        rules = [(f"{rid} — {title[:40]}", str(rid)) for rid, title in titles.items()]
        # each control fills its grid cell; a long rule title never widens the row
        layout = w.Layout(width="auto", min_width="0")
        style = {"description_width": _LABEL_WIDTH}
        self.persona = w.Dropdown(
            options=[("any persona", _ALL), *((p, p) for p in personas)],
            description="persona",
            layout=layout,
            style=style,
        )
        self.rule = w.Dropdown(
            options=[("any rule", _ALL), *rules], description="rule", layout=layout, style=style
        )
        self.verdict = w.Dropdown(
            options=[("any verdict", _ALL), *((v, v) for v in _VERDICTS)],
            description="verdict",
            layout=layout,
            style=style,
        )
        self.status = w.Dropdown(
            options=[("any status", _ALL), *((s, s) for s in statuses)],
            description="status",
            layout=layout,
            style=style,
        )
        self.cluster = w.Dropdown(
            options=[("any cluster", _ALL), *self._cluster_options()],
            description="cluster",
            layout=layout,
            style=style,
        )
        self.search = w.Text(
            placeholder="text in turns, id or variables",
            description="search",
            layout=layout,
            style=style,
        )
        self.prev_button = w.Button(description="◀ previous", layout=w.Layout(width="auto"))
        self.next_button = w.Button(description="next ▶", layout=w.Layout(width="auto"))
        self.page_label = w.Label()
        self.conversation = w.Dropdown(options=[], description="show", layout=layout)
        self.page_html = w.HTML()
        self.transcript_html = w.HTML()
        controls = [self.persona, self.rule, self.verdict, self.status, self.search]
        if self._clusters is not None:
            controls.insert(4, self.cluster)
        for control in controls:
            control.observe(self._on_filter, names="value")
        self.conversation.observe(self._on_select, names="value")
        self.prev_button.on_click(lambda _: self.go_to_page(self.page - 1))
        self.next_button.on_click(lambda _: self.go_to_page(self.page + 1))
        self.controls = BrowserControls(
            self._main.run, self._main.grades_of, self._main.turns_of, self._client
        )
        css = w.HTML(render_html("style.html", css=stylesheet()))
        filters = w.GridBox(
            controls,
            layout=w.Layout(grid_template_columns=_FILTER_COLUMNS, grid_gap="4px 16px"),
        )
        paging = w.HBox(
            [self.prev_button, self.page_label, self.next_button],
            layout=w.Layout(align_items="center"),
        )
        self.widget: ipywidgets.VBox = w.VBox(
            [
                css,
                filters,
                paging,
                self.page_html,
                self.conversation,
                self.controls.widget,
                self.transcript_html,
            ]
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]

    # ------------------------------------------------------------------ state
    @property
    def filters(self) -> Filters:
        """The filter values the widgets hold now."""
        return Filters(
            persona=str(self.persona.value or _ALL),
            rule=str(self.rule.value or _ALL),
            verdict=str(self.verdict.value or _ALL),
            status=str(self.status.value or _ALL),
            text=str(self.search.value or _ALL).strip(),
        )

    @property
    def n_pages(self) -> int:
        """Pages of the current matches (at least 1)."""
        return max(1, -(-len(self.matches) // self.page_size))

    def _text_of(self) -> dict[str, str]:
        """Casefolded searchable text per conversation (turns, id, persona, variables)."""
        if self._haystack is None:
            self._haystack = searchable_text(self._main.conversations, self._main.run.turns)
        return self._haystack

    def matching(self, filters: Filters | None = None) -> list[str]:
        """Conversation ids that pass ``filters`` (default: the widgets'), in grid order."""
        f = filters or self.filters
        text = self._text_of() if f.text else None
        found = filter_conversations(self._main.conversations, self._main.grades, f, text)
        chosen = str(self.cluster.value or _ALL)
        if chosen:
            members = self._cluster_ids(chosen)
            found = [cid for cid in found if cid in members]
        return found

    def _cluster_options(self) -> list[tuple[str, str]]:
        if self._clusters is None:
            return []
        return [
            (
                f"{row['rule_id']} #{row['cluster']}: {str(row['label'])[:40]}",
                f"{row['rule_id']}#{row['cluster']}",
            )
            for row in self._clusters.to_dict(orient="records")
        ]

    def _cluster_ids(self, value: str) -> set[str]:
        """This run's conversations in the failure cluster ``rule_id#number``."""
        from ..diagnose import cluster_members

        if self._clusters is None:
            return set()
        rule, _, number = value.rpartition("#")
        members = cluster_members(self._clusters, rule, int(number))
        here = members[members["run_id"].astype(str) == self._main.run.run_id]
        return set(here["conversation_id"].astype(str))

    def page_ids(self) -> list[str]:
        """The conversation ids on the current page."""
        start = self.page * self.page_size
        return self.matches[start : start + self.page_size]

    # ------------------------------------------------------------------ callbacks
    def _on_filter(self, _change: Mapping[str, Any]) -> None:
        self.page = 0
        self._refresh()

    def _on_select(self, change: Mapping[str, Any]) -> None:
        if not self._busy:
            self.transcript_html.value = self._pair_html(change.get("new"))
            self.controls.show(change.get("new") or None)

    def go_to_page(self, page: int) -> None:
        """Show page ``page`` (clamped to the pages there are)."""
        self.page = min(max(0, page), self.n_pages - 1)
        self._show_page()

    def _refresh(self) -> None:
        self.matches = self.matching()
        self.page = min(self.page, self.n_pages - 1)
        self._show_page()

    def _show_page(self) -> None:
        ids = self.page_ids()
        conv = self._main.conversations
        self._busy = True
        try:
            self.conversation.options = [
                (f"{cid} · {conv.at[cid, 'persona_label']!s} · {conv.at[cid, 'status']!s}", cid)
                for cid in ids
            ]
            self.conversation.value = ids[0] if ids else None
        finally:
            self._busy = False
        self.page_label.value = (
            f"page {self.page + 1} of {self.n_pages} · {len(self.matches)} of {len(conv)} "
            "conversations"
        )
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= self.n_pages - 1
        self.page_html.value = self._page_table(ids)
        self.transcript_html.value = self._pair_html(ids[0] if ids else None)
        self.controls.show(ids[0] if ids else None)

    # ------------------------------------------------------------------ rendering
    def _page_table(self, ids: list[str]) -> str:
        if not ids:
            return render_html("note.html", text="No conversation matches these filters.")
        conv = self._main.conversations.loc[ids]
        frame = pd.DataFrame(
            {
                "conversation": conv.index,
                "persona": conv["persona_label"].astype(str).to_numpy(),
                "variables": [record_text(v)[:60] for v in conv["variables"]],
                "status": conv["status"].astype(str).to_numpy(),
                "turns": conv["n_turns"].to_numpy(),
                "score": [self._main.scores.get(cid) for cid in ids],
            }
        )
        if self._other is not None:
            other = self._other
            frame[f"score ({other.label})"] = [
                other.scores.get(p) if (p := other.partner(self._main.key(cid))) else None
                for cid in ids
            ]
        return table_html(frame, max_rows=len(frame), float_format="{:.0f}")

    def _pair_html(self, cid: str | None) -> str:
        if not cid or cid not in self._main.conversations.index:
            return ""
        main = self._main.transcript(cid)
        if self._other is None:
            return main
        partner = self._other.partner(self._main.key(cid))
        other = (
            self._other.transcript(partner)
            if partner is not None
            else render_html("note.html", text="No conversation of this cell in this run.")
        )
        return side_by_side_html({self._main.label: main, self._other.label: other})

    def to_html(self, limit: int = 3, by: str = "persona_label") -> str:
        """A static version: for each value of ``by``, its first ``limit`` matching conversations.

        The current filters apply (except ``by``'s own); no widgets, only escaped HTML with the
        report CSS, fit for a report that loads nothing from outside.
        """
        conv = self._main.conversations
        base = self.filters
        if by == "persona_label":
            base = Filters(base.persona and _ALL, base.rule, base.verdict, base.status, base.text)
        ids = set(self.matching(base))
        groups = []
        for value, group in conv[conv.index.isin(ids)].groupby(by, sort=True):
            shown = [str(c) for c in group.index[:limit]]
            groups.append(
                {
                    "value": str(value),
                    "shown": len(shown),
                    "total": len(group),
                    "pairs": [Markup(self._pair_html(cid)) for cid in shown],
                }
            )
        return render_html("browser_groups.html", by=by, groups=groups, css=stylesheet())
