"""The emulator's admin API (``/_emulator/...``) over HTTP, for a server in this process
(:class:`~evalkit.emulator.EmulatorServer` is one) or one running elsewhere (``evalkit
emulator``, a test session's shared emulator): ``EmulatorAdmin(url, api_key)``."""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["EmulatorAdmin"]


class EmulatorAdmin:
    """The admin endpoints of the emulator at ``url`` (its root, ``http://host:port``), called
    with the project key ``api_key`` (never shown in a repr). Close it with :meth:`close` (or
    a ``with`` block) to release its connection."""

    def __init__(self, url: str, api_key: str) -> None:
        self._url = url.rstrip("/").removesuffix("/v1")
        self._api_key = api_key
        self._http: httpx.Client | None = None

    @property
    def url(self) -> str:
        """The server's root (``http://host:port``)."""
        return self._url

    @property
    def api_key(self) -> str:
        """The project key the admin calls (and a client of ``base_url``) use."""
        return self._api_key

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def judge_base_url(self) -> str:
        """The emulated judge's OpenAI-compatible base URL (model ``emulator-judge``)."""
        return self.url + "/_emulator/judge/v1"

    @property
    def proposer_base_url(self) -> str:
        """The emulated proposer's OpenAI-compatible base URL (model ``emulator-proposer``)."""
        return self.url + "/_emulator/proposer/v1"

    @property
    def generator_base_url(self) -> str:
        """The emulated persona generator's OpenAI-compatible base URL (model
        ``emulator-generator``)."""
        return self.url + "/_emulator/generator/v1"

    @property
    def admin_url(self) -> str:
        return self.url + "/_emulator"

    def close(self) -> None:
        """Close the admin connection (idempotent)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> EmulatorAdmin:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmulatorAdmin(url={self.url!r})"

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(base_url=self.admin_url, timeout=30.0)
        return self._http

    def admin(self, method: str, path: str, json: Any = None, *, api_key: str | None = None) -> Any:
        """Call an admin endpoint (``path`` relative to ``/_emulator``); the JSON answer.

        Raises ``httpx.HTTPStatusError`` on an error status.
        """
        headers = {"Authorization": f"Bearer {api_key or self.api_key}"}
        response = self._client().request(method, path, json=json, headers=headers)
        response.raise_for_status()
        return response.json() if response.content else None

    def new_project(self, organization_id: str | None = None) -> dict[str, str]:
        """A new project: {organizationId, projectId, apiKey}."""
        body = {"organizationId": organization_id} if organization_id else {}
        result: dict[str, str] = self.admin("POST", "/projects", body)
        return result

    def publish(
        self, assistant_id: str, *, readable: bool | None = None, api_key: str | None = None
    ) -> dict[str, Any]:
        """Point `prod` at the current draft version; E5-shaped metadata back."""
        body = {} if readable is None else {"readable": readable}
        result: dict[str, Any] = self.admin(
            "POST", f"/assistants/{assistant_id}/publish", body, api_key=api_key
        )
        return result

    def set_readable(
        self, assistant_id: str, readable: bool, *, api_key: str | None = None
    ) -> dict[str, Any]:
        """Hold the published version unreadable (E8 answers 503) or release it."""
        result: dict[str, Any] = self.admin(
            "PUT", f"/assistants/{assistant_id}/readable", {"readable": readable}, api_key=api_key
        )
        return result

    def versions(self, assistant_id: str, *, api_key: str | None = None) -> list[dict[str, Any]]:
        """Every saved version of an assistant, with its config."""
        result: list[dict[str, Any]] = self.admin(
            "GET", f"/assistants/{assistant_id}/versions", api_key=api_key
        )
        return result

    def build(
        self,
        name: str,
        brief: dict[str, Any],
        instructions: str,
        *,
        initial_greeting: bool | None = None,
        config: dict[str, Any] | None = None,
        api_key: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """An assistant built from a brief (with build artifacts, so refine works)."""
        body: dict[str, Any] = {"name": name, "brief": brief, "instructions": instructions}
        if initial_greeting is not None:
            body["initialGreeting"] = initial_greeting
        if config is not None:
            body["config"] = config
        body.update(extra)
        result: dict[str, Any] = self.admin("POST", "/builds", body, api_key=api_key)
        return result

    def build_status(self, build_id: str, *, api_key: str | None = None) -> dict[str, Any]:
        """{buildId, assistantId, status, ...} of a build."""
        result: dict[str, Any] = self.admin("GET", f"/builds/{build_id}", api_key=api_key)
        return result

    def create_contact_list(
        self, contact_list: dict[str, Any], *, api_key: str | None = None
    ) -> dict[str, Any]:
        """Store a contact list (without ids and timestamps); the stored list back."""
        result: dict[str, Any] = self.admin("POST", "/contact-lists", contact_list, api_key=api_key)
        return result

    def set_faults(
        self,
        *,
        drop_rate: float = 0.0,
        error_event_rate: float = 0.0,
        http429_rate: float = 0.0,
        http503_rate: float = 0.0,
        seed: int | None = None,
        api_key: str | None = None,
    ) -> dict[str, Any]:
        """Replace the project's fault rates (0..1)."""
        body = {
            "dropRate": drop_rate,
            "errorEventRate": error_event_rate,
            "http429Rate": http429_rate,
            "http503Rate": http503_rate,
            "seed": seed,
        }
        result: dict[str, Any] = self.admin("PUT", "/faults", body, api_key=api_key)
        return result

    def set_credits(self, credits: float | None, *, api_key: str | None = None) -> dict[str, Any]:
        """Set the organization's credits (None: unlimited; 0 makes E8 answer 402)."""
        result: dict[str, Any] = self.admin(
            "PUT", "/credits", {"credits": credits}, api_key=api_key
        )
        return result

    def set_synthesis_limit(self, requests_per_minute: int | None) -> dict[str, Any]:
        """Cap E11/E12 requests per project per emulated minute (None: no cap)."""
        body = {"requestsPerMinute": requests_per_minute}
        result: dict[str, Any] = self.admin("PUT", "/synthesis-limit", body)
        return result

    def stats(self) -> dict[str, int]:
        """Simulation counters: started, completed, cancelled, active, errored, dropped."""
        result: dict[str, int] = self.admin("GET", "/stats")
        return result
