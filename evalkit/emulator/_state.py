"""The emulator's state: projects and keys, assistants with versions and aliases, builds,
phrase replacement configs, contact lists and credits.

All changes go through :class:`State` under one lock and are written through to the
document store (SQLite when persistence is on).
"""

from __future__ import annotations

import copy
import secrets
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ._ids import key_hash, new_api_key, new_id, now_iso
from ._persistence import DocumentStore, MemoryStore
from ._records import (
    Alias,
    AssistantRecord,
    AssistantVersion,
    Build,
    BuildArtifacts,
    Doc,
    Organization,
    PhraseConfig,
    Project,
)

_UNSET: Any = object()


class State:
    """Everything the emulator remembers; thread-safe."""

    def __init__(self, store: DocumentStore | None = None) -> None:
        self._store: DocumentStore = store if store is not None else MemoryStore()
        self._lock = threading.RLock()
        self.organizations: dict[str, Organization] = {}
        self.projects: dict[str, Project] = {}
        self._keys: dict[str, str] = {}
        self.assistants: dict[str, AssistantRecord] = {}
        self.builds: dict[str, Build] = {}
        self.phrase_configs: dict[str, PhraseConfig] = {}
        self.contact_lists: dict[str, Doc] = {}
        self.meta: dict[str, Any] = {}
        self._occurrences: Counter[tuple[str, str, str]] = Counter()
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        """Read every stored document back (each kind is stored under its record's id)."""
        docs = self._store.load()

        def kind(name: str) -> dict[str, Doc]:
            return dict(docs.get(name, {}))

        self.organizations = {k: Organization.from_doc(d) for k, d in kind("organization").items()}
        self.projects = {k: Project.from_doc(d) for k, d in kind("project").items()}
        self._keys = {h: p.project_id for p in self.projects.values() for h in p.key_hashes}
        self.assistants = {k: AssistantRecord.from_doc(d) for k, d in kind("assistant").items()}
        self.builds = {k: Build.from_doc(d) for k, d in kind("build").items()}
        self.phrase_configs = {
            k: PhraseConfig.from_doc(d) for k, d in kind("phrase_config").items()
        }
        self.contact_lists = kind("contact_list")
        self.meta.update(kind("meta").get("meta", {}))

    def _put_meta(self) -> None:
        self._store.put("meta", "meta", dict(self.meta))

    def close(self) -> None:
        """Close the document store."""
        with self._lock:
            self._store.close()

    # ------------------------------------------------------------------ secrets and projects

    def livekit_keys(self, api_key: str | None, api_secret: str | None) -> tuple[str, str]:
        """The LiveKit key pair that signs session tokens: the given parts, the rest generated
        once (``API`` + 12 characters, a 43-character URL-safe secret) and kept across
        restarts. Given parts are not stored: they are the caller's to keep."""
        with self._lock:
            if "livekitApiKey" not in self.meta:
                self.meta["livekitApiKey"] = "API" + secrets.token_hex(6)
                self.meta["livekitApiSecret"] = secrets.token_urlsafe(32)
                self.meta.pop("jwtSecret", None)
                self._put_meta()
            return (
                api_key if api_key is not None else str(self.meta["livekitApiKey"]),
                api_secret if api_secret is not None else str(self.meta["livekitApiSecret"]),
            )

    def bootstrap(self, api_key: str | None) -> str:
        """The key of the default project: the given key (attached to the default project
        when new) or, when None, a fresh key for the default project (created if needed)."""
        with self._lock:
            if api_key is not None and key_hash(api_key) in self._keys:
                self.meta["defaultProjectId"] = self._keys[key_hash(api_key)]
                self._put_meta()
                return api_key
            key = api_key if api_key is not None else new_api_key()
            default = self.projects.get(str(self.meta.get("defaultProjectId", "")))
            if default is None:
                default, _ = self.create_project(api_key=key)
                self.meta["defaultProjectId"] = default.project_id
                self._put_meta()
            else:
                self.add_key(default, key)
            return key

    def create_project(
        self, organization_id: str | None = None, api_key: str | None = None
    ) -> tuple[Project, str]:
        """A new project (in a new organization unless one is named) and its first key."""
        with self._lock:
            org_id = organization_id or new_id()
            if org_id not in self.organizations:
                org = Organization(org_id)
                self.organizations[org_id] = org
                self._store.put("organization", org_id, org.to_doc())
            project = Project(new_id(), org_id, now_iso())
            self.projects[project.project_id] = project
            key = api_key if api_key is not None else new_api_key()
            self.add_key(project, key)
            return project, key

    def add_key(self, project: Project, api_key: str) -> None:
        """Let another key reach the project."""
        with self._lock:
            digest = key_hash(api_key)
            if digest in self._keys and self._keys[digest] != project.project_id:
                raise ValueError("api_key: this key already belongs to another project")
            if digest not in project.key_hashes:
                project.key_hashes.append(digest)
            self._keys[digest] = project.project_id
            self._store.put("project", project.project_id, project.to_doc())

    def project_for_key(self, api_key: str) -> Project | None:
        """The project a key belongs to, or None."""
        with self._lock:
            project_id = self._keys.get(key_hash(api_key))
            return self.projects.get(project_id) if project_id else None

    # ------------------------------------------------------------------ credits

    def credits(self, organization_id: str) -> float | None:
        with self._lock:
            org = self.organizations.get(organization_id)
            return org.credits if org else None

    def set_credits(self, organization_id: str, credits: float | None) -> None:
        with self._lock:
            org = self.organizations.setdefault(organization_id, Organization(organization_id))
            org.credits = credits
            self._store.put("organization", organization_id, org.to_doc())

    def spend_credit(self, organization_id: str) -> bool:
        """Spend one credit; False when the organization has none left."""
        with self._lock:
            org = self.organizations.get(organization_id)
            if org is None or org.credits is None:
                return True
            if org.credits < 1:
                return False
            org.credits -= 1
            self._store.put("organization", organization_id, org.to_doc())
            return True

    # ------------------------------------------------------------------ assistants

    def _put_assistant(self, rec: AssistantRecord) -> None:
        self._store.put("assistant", rec.assistant_id, rec.to_doc())

    def get_assistant(self, assistant_id: str) -> AssistantRecord | None:
        """A live (not deleted) assistant, or None."""
        with self._lock:
            rec = self.assistants.get(assistant_id)
            return rec if rec is not None and not rec.deleted else None

    def list_assistants(self, project_id: str) -> list[AssistantRecord]:
        with self._lock:
            return [
                r for r in self.assistants.values() if r.project_id == project_id and not r.deleted
            ]

    def create_assistant(
        self,
        project: Project,
        *,
        name: str,
        description: str | None,
        config: Mapping[str, Any],
        public: bool,
        by: str,
        artifacts: BuildArtifacts | None = None,
    ) -> AssistantRecord:
        """A new assistant at version 1 (its draft)."""
        with self._lock:
            now = now_iso()
            version = AssistantVersion(1, name, description, copy.deepcopy(dict(config)), now, by)
            rec = AssistantRecord(
                assistant_id=new_id(),
                organization_id=project.organization_id,
                project_id=project.project_id,
                created_at=now,
                created_by=by,
                public=public,
                versions=[version],
                draft=Alias(1, now, by),
                artifacts=artifacts,
            )
            self.assistants[rec.assistant_id] = rec
            self._put_assistant(rec)
            return rec

    def save_assistant(
        self,
        rec: AssistantRecord,
        *,
        by: str,
        name: str = _UNSET,
        description: str | None = _UNSET,
        config: Mapping[str, Any] = _UNSET,
        public: bool = _UNSET,
    ) -> AssistantRecord:
        """A save: a new version with the given fields changed; `draft` moves to it."""
        with self._lock:
            cur = rec.current
            now = now_iso()
            version = AssistantVersion(
                version=cur.version + 1,
                name=cur.name if name is _UNSET else name,
                description=cur.description if description is _UNSET else description,
                config=copy.deepcopy(cur.config if config is _UNSET else dict(config)),
                saved_at=now,
                saved_by=by,
            )
            rec.versions.append(version)
            rec.draft = Alias(version.version, now, by)
            if public is not _UNSET:
                rec.public = public
            self._put_assistant(rec)
            return rec

    def delete_assistant(self, rec: AssistantRecord) -> None:
        with self._lock:
            rec.deleted = True
            self._put_assistant(rec)

    def publish(self, rec: AssistantRecord, *, by: str, readable: bool | None = None) -> None:
        """Point `prod` at the current draft version."""
        with self._lock:
            rec.prod = Alias(rec.current.version, now_iso(), by)
            if readable is not None:
                rec.readable = readable
            self._put_assistant(rec)

    def set_readable(self, rec: AssistantRecord, readable: bool) -> None:
        with self._lock:
            rec.readable = readable
            self._put_assistant(rec)

    def set_artifacts(self, rec: AssistantRecord, artifacts: BuildArtifacts) -> None:
        with self._lock:
            rec.artifacts = artifacts
            self._put_assistant(rec)

    # ------------------------------------------------------------------ builds

    def put_build(self, build: Build) -> None:
        with self._lock:
            self.builds[build.build_id] = build
            self._store.put("build", build.build_id, build.to_doc())

    def in_flight_builds(self) -> list[Build]:
        with self._lock:
            return [b for b in self.builds.values() if b.in_flight]

    # ------------------------------------------------------------------ synthesis and lists

    def add_phrase_config(self, project: Project, replacements: list[Doc]) -> PhraseConfig:
        with self._lock:
            pc = PhraseConfig(new_id(), project.project_id, copy.deepcopy(replacements), now_iso())
            self.phrase_configs[pc.config_id] = pc
            self._store.put("phrase_config", pc.config_id, pc.to_doc())
            return pc

    def add_contact_list(self, project: Project, body: Mapping[str, Any]) -> Doc:
        """Store a contact list with its ids, timestamps (createdAt = updatedAt) and version 1."""
        with self._lock:
            now = now_iso()
            doc: Doc = {
                "listId": new_id(),
                "organizationId": project.organization_id,
                "projectId": project.project_id,
            }
            reserved = {*doc, "createdAt", "updatedAt", "version"}
            doc.update({k: copy.deepcopy(v) for k, v in body.items() if k not in reserved})
            doc.update({"createdAt": now, "updatedAt": now, "version": 1})
            self.contact_lists[doc["listId"]] = doc
            self._store.put("contact_list", doc["listId"], doc)
            return doc

    # ------------------------------------------------------------------ simulate seeds

    def next_occurrence(self, project_id: str, config_digest: str, body_digest: str) -> int:
        """How many times this exact body was simulated before (0-based) on this config in
        this project, whichever of its assistants holds the config: a clone made for each wave
        of a sweep goes on from the repeats run before it instead of drawing them again."""
        with self._lock:
            key = (project_id, config_digest, body_digest)
            n = self._occurrences[key]
            self._occurrences[key] = n + 1
            return n
