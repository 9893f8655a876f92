"""The emulator's stored records and their JSON documents (what SQLite persistence keeps).

API keys are never stored: a project keeps the SHA-256 digests of its keys, and the
identities shown in `createdBy`/`updatedBy` are masked (`sk_api_…abcd`).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any, Self, cast

Doc = dict[str, Any]


class Stored:
    """A record kept in the document store as its fields, as they are."""

    __slots__ = ()

    def to_doc(self) -> Doc:
        return asdict(cast(Any, self))

    @classmethod
    def from_doc(cls, doc: Doc) -> Self:
        return cls(**doc)


@dataclass(slots=True)
class Organization(Stored):
    """An organization; `credits` None means unlimited (E8 spends one per session)."""

    organization_id: str
    credits: float | None = None


@dataclass(slots=True)
class Project(Stored):
    """A project: its organization and the digests of its API keys."""

    project_id: str
    organization_id: str
    created_at: str
    key_hashes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Alias:
    """Where an alias points and who moved it last."""

    version: int
    updated_at: str
    updated_by: str

    def to_json(self) -> Doc:
        return {"version": self.version, "updatedAt": self.updated_at, "updatedBy": self.updated_by}


@dataclass(slots=True)
class AssistantVersion:
    """One saved version: what a save wrote (config kept exactly as given)."""

    version: int
    name: str
    description: str | None
    config: Doc
    saved_at: str
    saved_by: str


@dataclass(slots=True)
class BuildArtifacts:
    """What a build left behind: the generated name, the brief and the config template."""

    name: str
    brief: Doc
    config_template: Doc


@dataclass(slots=True)
class AssistantRecord(Stored):
    """An assistant with every version it ever had, its aliases and its build artifacts."""

    assistant_id: str
    organization_id: str
    project_id: str
    created_at: str
    created_by: str
    public: bool
    versions: list[AssistantVersion]
    draft: Alias
    prod: Alias | None = None
    deleted: bool = False
    readable: bool = True
    artifacts: BuildArtifacts | None = None

    @property
    def current(self) -> AssistantVersion:
        """The draft: the latest saved version."""
        return self.versions[-1]

    def version(self, number: int) -> AssistantVersion | None:
        """A version by number, or None."""
        for v in self.versions:
            if v.version == number:
                return v
        return None

    @property
    def live(self) -> AssistantVersion:
        """What calls run: prod once published, the draft until then."""
        if self.prod is not None:
            found = self.version(self.prod.version)
            if found is not None:
                return found
        return self.current

    def aliases_json(self) -> Doc:
        out: Doc = {"draft": self.draft.to_json()}
        if self.prod is not None:
            out["prod"] = self.prod.to_json()
        return out

    def to_json(self, *, with_version: bool = True) -> Doc:
        """The Assistant resource (the draft); E2's shape without version and aliases."""
        cur = self.current
        last = self.draft
        out: Doc = {
            "realtimeAssistantId": self.assistant_id,
            "organizationId": self.organization_id,
            "projectId": self.project_id,
            "name": cur.name,
        }
        if cur.description is not None:
            out["description"] = cur.description
        out.update(
            {
                "config": copy.deepcopy(cur.config),
                "public": self.public,
                "createdAt": self.created_at,
                "updatedAt": last.updated_at,
                "createdBy": self.created_by,
                "updatedBy": last.updated_by,
            }
        )
        if with_version:
            out["version"] = cur.version
            out["aliases"] = self.aliases_json()
        return out

    def metadata_json(self) -> Doc:
        """E5: publish state without config."""
        cur = self.current
        out: Doc = {"realtimeAssistantId": self.assistant_id, "name": cur.name}
        if cur.description is not None:
            out["description"] = cur.description
        out["aliases"] = self.aliases_json()
        return out

    @classmethod
    def from_doc(cls, doc: Doc) -> Self:
        d = dict(doc)
        d["versions"] = [AssistantVersion(**v) for v in d["versions"]]
        d["draft"] = Alias(**d["draft"])
        d["prod"] = Alias(**d["prod"]) if d.get("prod") else None
        d["artifacts"] = BuildArtifacts(**d["artifacts"]) if d.get("artifacts") else None
        return cls(**d)


@dataclass(slots=True)
class Build(Stored):
    """A refine build; times are wall-clock epoch seconds so a restart can finish it."""

    build_id: str
    assistant_id: str
    project_id: str
    status: str
    created_at: str
    running_at: float
    finishes_at: float
    owner_feedback: str
    requested_by: str
    base_instructions: str = ""
    finished_at: str | None = None
    error: str | None = None

    @property
    def in_flight(self) -> bool:
        return self.status in ("started", "running")

    def to_json(self) -> Doc:
        out: Doc = {
            "buildId": self.build_id,
            "assistantId": self.assistant_id,
            "status": self.status,
            "createdAt": self.created_at,
        }
        if self.finished_at is not None:
            out["finishedAt"] = self.finished_at
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class PhraseConfig(Stored):
    """An E12 phrase replacement config."""

    config_id: str
    project_id: str
    phrase_replacements: list[Doc]
    created_at: str

    def to_json(self) -> Doc:
        return {
            "configId": self.config_id,
            "phraseReplacements": copy.deepcopy(self.phrase_replacements),
        }
