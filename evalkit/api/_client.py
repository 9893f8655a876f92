"""The synchronous client, one method per operation (E1–E13)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import httpx

from ._base import BaseClient, PersonaLike, RequestSpec, transport_error
from ._config import DEFAULT_LIMITS, Secret, as_secret
from ._models import (
    Assistant,
    AssistantConfig,
    AssistantMetadata,
    ContactList,
    PhraseReplacementConfig,
    RefineResponse,
    SessionCredentials,
)
from ._retry import RetryPolicy
from ._streaming import SimulationStream

T = TypeVar("T")


class Client(BaseClient):
    """A client for the voice assistant service.

    ``base_url`` and ``api_key`` default to ``EVALKIT_BASE_URL`` and ``EVALKIT_API_KEY``. The
    key never appears in a repr, a log line or an exception. Use it as a context manager, or
    call :meth:`close`, to release connections.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        timeout: float | httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        stream_deadline: float | None = None,
        limits: httpx.Limits | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        api_key = as_secret(api_key)  # never a plain local, even when construction fails
        super().__init__(
            base_url, api_key, timeout=timeout, retry=retry, stream_deadline=stream_deadline
        )
        self.custom_transport = transport is not None
        self._http = httpx.Client(
            limits=limits or DEFAULT_LIMITS, transport=transport, follow_redirects=False
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection."""
        self._http.close()

    # ------------------------------------------------------------------ execution

    def _send(self, spec: RequestSpec[Any], *, stream: bool) -> httpx.Response:
        """One operation's response, with the retry policy applied before any stream starts
        (a transport error given up on is an :class:`~evalkit.api.ApiConnectionError`)."""

        def attempt(_: int) -> httpx.Response:
            request = self._build_request(self._http, spec)
            response: httpx.Response | None = None
            try:
                response = self._http.send(request, stream=stream)
                if self._unusable(response, stream=stream):
                    if stream:
                        response.read()
                    raise self._response_error(spec, response)
                return response
            except BaseException:
                if response is not None:
                    response.close()
                raise

        try:
            return self.retry.run(
                attempt, decide=self._decide(spec), rng=self._rng, on_retry=self._on_retry(spec)
            )
        except httpx.TransportError as exc:
            raise transport_error(exc, spec.method, spec.path) from exc

    def _call(self, spec: RequestSpec[T]) -> T:
        response = self._send(spec, stream=False)
        return spec.parse(response)

    # ------------------------------------------------------------------ operations

    def list_assistants(self, *, extra_body: Mapping[str, Any] | None = None) -> list[Assistant]:
        """E1: every assistant in the key's project, as its draft, with aliases."""
        return self._call(self._spec_list_assistants(extra_body))

    def create_assistant(
        self,
        name: str,
        config: AssistantConfig | Mapping[str, Any],
        description: str | None = None,
        public: bool | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> Assistant:
        """E2: create an assistant (the config is checked against the spec first)."""
        return self._call(
            self._spec_create_assistant(name, config, description, public, extra_body)
        )

    def update_assistant(
        self, assistant_id: str, *, extra_body: Mapping[str, Any] | None = None, **fields: Any
    ) -> Any:
        """E3: send a partial assistant (for example ``public=True``); returns the JSON answer."""
        return self._call(self._spec_update_assistant(assistant_id, fields, extra_body))

    def delete_assistant(
        self, assistant_id: str, *, extra_body: Mapping[str, Any] | None = None
    ) -> None:
        """E4: delete an assistant; sessions already active continue."""
        self._call(self._spec_delete_assistant(assistant_id, extra_body))

    def get_assistant_metadata(
        self, assistant_id: str, *, extra_body: Mapping[str, Any] | None = None
    ) -> AssistantMetadata:
        """E5: publish state (aliases), without config."""
        return self._call(self._spec_get_assistant_metadata(assistant_id, extra_body))

    def create_session(
        self,
        assistant_id: str,
        participant_name: str,
        room_name: str | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> SessionCredentials:
        """E6: join credentials, with the API key (call from a backend only)."""
        return self._call(
            self._spec_session(
                "createSession", assistant_id, participant_name, room_name, extra_body, auth=True
            )
        )

    def create_public_session(
        self,
        assistant_id: str,
        participant_name: str,
        room_name: str | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> SessionCredentials:
        """E7: join credentials for a public assistant; no Authorization header is sent."""
        return self._call(
            self._spec_session(
                "createPublicSession",
                assistant_id,
                participant_name,
                room_name,
                extra_body,
                auth=False,
            )
        )

    def open_public_session(
        self,
        assistant_id: str,
        participant_name: str,
        room_name: str | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> SessionCredentials:
        """E8: a session without an API key, billed to the owner (402 without credits)."""
        return self._call(
            self._spec_session(
                "public-session", assistant_id, participant_name, room_name, extra_body, auth=False
            )
        )

    def simulate(
        self,
        assistant_id: str,
        persona: PersonaLike | Mapping[str, Any],
        context: str | None = None,
        variables: Mapping[str, Any] | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> SimulationStream:
        """E9: rehearse a call; iterate the returned stream for typed events.

        The body is checked before anything is sent. The request is made when iteration (or
        ``with``) starts; a JSON 400 raises :class:`~evalkit.BadRequestError`.
        """
        spec = self._spec_simulate(assistant_id, persona, context, variables, extra_body)
        return SimulationStream(lambda: self._send(spec, stream=True), self.stream_deadline)

    def refine(
        self, assistant_id: str, owner_feedback: str, *, extra_body: Mapping[str, Any] | None = None
    ) -> RefineResponse:
        """E10: start a refine build (200 only says it began). Pass a brief via ``extra_body``."""
        return self._call(self._spec_refine(assistant_id, owner_feedback, extra_body))

    def text_to_speech(
        self,
        text: str,
        voice_id: str,
        output_format: str,
        phrase_replacement_config_id: str | None = None,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> bytes:
        """E11: synthesize speech; returns the audio bytes."""
        return self._call(
            self._spec_text_to_speech(
                text, voice_id, output_format, phrase_replacement_config_id, extra_body
            )
        )

    def create_phrase_replacement_config(
        self,
        phrase_replacements: Sequence[Mapping[str, str]] | Mapping[str, str],
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> PhraseReplacementConfig:
        """E12: store phrase replacements (a list of {phrase, replacement} or a mapping)."""
        return self._call(
            self._spec_create_phrase_replacement_config(phrase_replacements, extra_body)
        )

    def get_contact_list(
        self, list_id: str, *, extra_body: Mapping[str, Any] | None = None
    ) -> ContactList:
        """E13: a contact list's metadata."""
        return self._call(self._spec_get_contact_list(list_id, extra_body))
