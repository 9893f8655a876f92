"""What the sync and async clients share: request specs, validation, response handling.

Each public method of :class:`~evalkit.Client` and :class:`~evalkit.AsyncClient` is two lines:
build a :class:`RequestSpec` here (validating the body first, so nothing is spent on a bad
request), then execute it with the twin's own I/O and the shared retry policy.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from .._util import SaidOnce
from ._config import ClientSettings, Secret, as_secret, resolve_settings
from ._exceptions import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    UnexpectedResponseError,
)
from ._limits import RATE_LIMIT_MESSAGE
from ._models import (
    WIRE_CONTEXT,
    ApiModel,
    Assistant,
    AssistantConfig,
    AssistantMetadata,
    ContactList,
    PhraseReplacementConfig,
    RefineResponse,
    SessionCredentials,
)
from ._problems import Problem, errors_only
from ._requests import (
    CreateAssistantBody,
    PhraseReplacementBody,
    RefineBody,
    SessionBody,
    SimulateBody,
    TextToSpeechBody,
    UpdateAssistantBody,
    check_request,
)
from ._retry import OnRetry, RetryDecision, RetryPolicy, default_decision, parse_retry_after
from ._sse import is_event_stream
from ._version import USER_AGENT

logger = logging.getLogger("evalkit.api")

T = TypeVar("T")

_STATUS_ERRORS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


@runtime_checkable
class PersonaLike(Protocol):
    """Anything with the persona fields E9 takes (evalkit's ``Persona`` is one)."""

    label: str
    behavior: str
    path: str


@dataclass(frozen=True, slots=True)
class RequestSpec(Generic[T]):
    """One operation, ready to send: method, path, body, auth and how to read the answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    body: Any = None
    auth: bool = True
    idempotent: bool = False
    accept: str = "application/json"


def _model_parser(model: type[BaseModel]) -> Callable[[httpx.Response], Any]:
    def parse(response: httpx.Response) -> Any:
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise UnexpectedResponseError(
                f"{response.request.method} {response.request.url.path}: the answer is not a "
                f"{model.__name__}: {exc.error_count()} problem(s), first: {exc.errors()[0]['msg']} "
                f"at {'.'.join(str(p) for p in exc.errors()[0]['loc'])}"
            ) from None

    return parse


_ASSISTANT_LIST = TypeAdapter(list[Assistant])


def _parse_assistant_list(response: httpx.Response) -> list[Assistant]:
    try:
        return _ASSISTANT_LIST.validate_json(response.content, context={WIRE_CONTEXT: True})
    except ValidationError as exc:
        raise UnexpectedResponseError(
            f"GET /realtime-assistants: the answer is not a list of assistants ({exc.error_count()} problem(s))"
        ) from None


def _parse_nothing(response: httpx.Response) -> None:
    return None


def _parse_bytes(response: httpx.Response) -> bytes:
    return response.content


def _parse_json(response: httpx.Response) -> Any:
    if not response.content.strip():
        return None
    try:
        return response.json()
    except ValueError:
        raise UnexpectedResponseError(
            f"{response.request.method} {response.request.url.path}: the answer is not JSON"
        ) from None


def error_from_response(response: httpx.Response) -> ApiError:
    """The typed error for an error answer (the body must have been read)."""
    body: Any
    try:
        body = response.json()
    except ValueError:
        body = response.text
    messages: list[str]
    error: str | None = None
    if isinstance(body, Mapping):
        raw = body.get("message")
        if isinstance(raw, list):
            messages = [str(m) for m in raw]
        elif raw is None:
            messages = []
        else:
            messages = [str(raw)]
        err = body.get("error")
        error = str(err) if err is not None else None
    else:
        text = str(body).strip()
        messages = [text[:500]] if text else []
    status = response.status_code
    if RATE_LIMIT_MESSAGE in messages:
        cls: type[ApiError] = RateLimitError
    else:
        cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else ApiError)
    exc = cls(
        status, messages, error, body, method=response.request.method, url=response.request.url.path
    )
    if isinstance(exc, RateLimitError):
        exc.retry_after = parse_retry_after(response.headers.get("retry-after"))
    return exc


def transport_error(exc: httpx.TransportError, method: str, path: str) -> ApiConnectionError:
    """An evalkit error for an httpx transport failure (no headers, so no key, in its text)."""
    cls = ApiTimeoutError if isinstance(exc, httpx.TimeoutException) else ApiConnectionError
    return cls(f"{method} {path}: {type(exc).__name__}: {exc}")


def _with_extra(body: dict[str, Any], extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    if extra_body:
        clash = sorted(set(body) & set(extra_body))
        if clash:
            raise InvalidRequestError(
                [
                    Problem(f"extra_body.{k}", "duplicates an argument of this method")
                    for k in clash
                ],
                "extra_body",
            )
        body = {**body, **extra_body}
    return body


def _optional(extra_body: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A body for operations that take none: only what ``extra_body`` adds."""
    return dict(extra_body) if extra_body else None


M = TypeVar("M", bound=BaseModel)


def _read(path: str, model: type[M], extra_body: Mapping[str, Any] | None) -> RequestSpec[M]:
    """A GET of one resource as ``model`` (idempotent, so it may be retried)."""
    return RequestSpec("GET", path, _model_parser(model), _optional(extra_body), idempotent=True)


def _jsonable(value: Any, field: str) -> Any:
    if isinstance(value, ApiModel):
        return value.to_json()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRequestError([Problem(field, f"must be JSON-serialisable: {exc}")]) from None
    return value


def persona_body(persona: PersonaLike | Mapping[str, Any]) -> dict[str, Any]:
    """The ``persona`` object E9 receives."""
    if isinstance(persona, Mapping):
        return dict(persona)
    if hasattr(persona, "to_api"):
        return dict(persona.to_api())
    return {"label": persona.label, "behavior": persona.behavior, "path": persona.path}


def _seg(value: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidRequestError([Problem(field, "must be a non-empty string")])
    return quote(value, safe="")


class BaseClient:
    """Settings, request building and error mapping shared by Client and AsyncClient."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        timeout: float | httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        stream_deadline: float | None = None,
    ) -> None:
        api_key = as_secret(api_key)  # never a plain local, even when construction fails
        self._settings: ClientSettings = resolve_settings(
            base_url, api_key, timeout=timeout, stream_deadline_s=stream_deadline
        )
        self.retry: RetryPolicy = retry or RetryPolicy()
        self._rng = self.retry.rng()
        self.said_once: SaidOnce = SaidOnce()
        """What this client (and the clients made from it) has warned about already: a
        config's warnings and lint findings are said once per target, not per wave and arm."""

    @property
    def base_url(self) -> str:
        """The service's base URL (ends with /v1)."""
        return self._settings.base_url

    @property
    def host(self) -> str:
        """Host and port of the base URL (safe to log and record)."""
        return self._settings.host

    @property
    def has_api_key(self) -> bool:
        """Whether an API key is configured (the key itself is never exposed)."""
        return self._settings.api_key is not None

    @property
    def stream_deadline(self) -> float:
        """Seconds a simulate stream may stay open in total."""
        return self._settings.stream_deadline_s

    def _twin_kwargs(self) -> dict[str, Any]:
        """Arguments that build a client with these same settings (sync or async)."""
        return {
            "base_url": self._settings.base_url,
            "api_key": self._settings.api_key,
            "timeout": self._settings.timeout,
            "retry": self.retry,
            "stream_deadline": self._settings.stream_deadline_s,
        }

    def __repr__(self) -> str:
        if not hasattr(self, "_settings"):  # construction failed (a traceback shows locals)
            return f"{type(self).__name__}(<not configured>)"
        key = "set" if self.has_api_key else "unset"
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key=<{key}>)"

    # ------------------------------------------------------------------ plumbing

    def _headers(self, spec: RequestSpec[Any]) -> dict[str, str]:
        headers = {"Accept": spec.accept, "User-Agent": USER_AGENT}
        if spec.auth:
            key: Secret | None = self._settings.api_key
            if key is None:
                raise ConfigurationError(
                    f"{spec.method} {spec.path} needs an API key: pass api_key= or set EVALKIT_API_KEY"
                )
            headers["Authorization"] = f"Bearer {key.reveal()}"
        return headers

    def _build_request(
        self, http: httpx.Client | httpx.AsyncClient, spec: RequestSpec[Any]
    ) -> httpx.Request:
        return http.build_request(
            spec.method,
            self._settings.base_url + spec.path,
            json=spec.body,
            headers=self._headers(spec),
            timeout=self._settings.timeout,
        )

    @staticmethod
    def _unusable(response: httpx.Response, *, stream: bool) -> bool:
        """Whether ``response`` is an error, or (``stream``) not an event stream; the twin reads
        a streamed one before :meth:`_response_error`."""
        return response.status_code >= 400 or (stream and not is_event_stream(response))

    @staticmethod
    def _response_error(
        spec: RequestSpec[Any], response: httpx.Response
    ) -> ApiError | UnexpectedResponseError:
        """The error an :meth:`_unusable` response raises (an :class:`ApiError` may be retried,
        an unexpected response is not)."""
        if response.status_code >= 400:
            return error_from_response(response)
        return UnexpectedResponseError(
            f"{spec.method} {spec.path}: expected an event stream, got "
            f"{response.headers.get('content-type')!r}"
        )

    @staticmethod
    def _decide(spec: RequestSpec[Any]) -> Callable[[Exception], RetryDecision]:
        """What the retry loop does after a failed attempt of ``spec``: the policy's rules for
        transport errors and error answers (:func:`is_retryable`), stop for anything else."""

        def decide(exc: Exception) -> RetryDecision:
            if isinstance(exc, httpx.TransportError | ApiError):
                return default_decision(exc, idempotent=spec.idempotent)
            return "stop"

        return decide

    def _on_retry(self, spec: RequestSpec[Any]) -> OnRetry:
        """Logs each retry of ``spec`` (attempt, error, wait)."""

        def log(attempt: int, exc: Exception, wait: float) -> None:
            logger.info(
                "%s %s failed (attempt %d/%d: %s); retrying in %.2fs",
                spec.method,
                spec.path,
                attempt,
                self.retry.max_attempts,
                exc,
                wait,
            )

        return log

    def _check(self, model: type[BaseModel], body: Any, what: str) -> None:
        """Refuse ``body`` when it breaks a rule of the spec (nothing is sent); log its
        warnings, each once per assistant name (a tune saves an arm's clone every wave)."""
        problems = check_request(model, body)
        errors = errors_only(problems)
        if errors:
            raise InvalidRequestError(errors, what)
        name = body.get("name") if isinstance(body, Mapping) else None
        said = f"{what} {name!r}" if isinstance(name, str) else what
        for p in problems:
            if self.said_once.first("request warning", said, str(p)):
                logger.warning("%s: %s", said, p)

    # ------------------------------------------------------------------ request specs (E1–E13)

    def _spec_list_assistants(
        self, extra_body: Mapping[str, Any] | None
    ) -> RequestSpec[list[Assistant]]:
        return RequestSpec(
            "GET",
            "/realtime-assistants",
            _parse_assistant_list,
            _optional(extra_body),
            idempotent=True,
        )

    def _spec_create_assistant(
        self,
        name: str,
        config: AssistantConfig | Mapping[str, Any],
        description: str | None,
        public: bool | None,
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[Assistant]:
        body: dict[str, Any] = {"name": name, "config": _jsonable(config, "config")}
        if description is not None:
            body["description"] = description
        if public is not None:
            body["public"] = public
        body = _with_extra(body, extra_body)
        self._check(CreateAssistantBody, body, "assistant")
        return RequestSpec("POST", "/realtime-assistants", _model_parser(Assistant), body)

    def _spec_update_assistant(
        self,
        assistant_id: str,
        fields: Mapping[str, Any],
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[Any]:
        body = {k: _jsonable(v, k) for k, v in fields.items()}
        body = _with_extra(body, extra_body)
        if not body:
            raise InvalidRequestError([Problem("fields", "nothing to update")], "assistant update")
        self._check(UpdateAssistantBody, body, "assistant update")
        return RequestSpec(
            "POST", f"/realtime-assistants/{_seg(assistant_id, 'assistant_id')}", _parse_json, body
        )

    def _spec_delete_assistant(
        self, assistant_id: str, extra_body: Mapping[str, Any] | None
    ) -> RequestSpec[None]:
        path = f"/realtime-assistants/{_seg(assistant_id, 'assistant_id')}"
        return RequestSpec("DELETE", path, _parse_nothing, _optional(extra_body), idempotent=True)

    def _spec_get_assistant_metadata(
        self, assistant_id: str, extra_body: Mapping[str, Any] | None
    ) -> RequestSpec[AssistantMetadata]:
        path = f"/realtime-assistants/{_seg(assistant_id, 'assistant_id')}/metadata"
        return _read(path, AssistantMetadata, extra_body)

    def _spec_session(
        self,
        operation: str,
        assistant_id: str,
        participant_name: str,
        room_name: str | None,
        extra_body: Mapping[str, Any] | None,
        *,
        auth: bool,
    ) -> RequestSpec[SessionCredentials]:
        body: dict[str, Any] = {"participantName": participant_name}
        if room_name is not None:
            body["roomName"] = room_name
        body = _with_extra(body, extra_body)
        self._check(SessionBody, body, "session request")
        path = f"/realtime-assistants/{_seg(assistant_id, 'assistant_id')}/{operation}"
        return RequestSpec("POST", path, _model_parser(SessionCredentials), body, auth=auth)

    def _spec_simulate(
        self,
        assistant_id: str,
        persona: PersonaLike | Mapping[str, Any],
        context: str | None,
        variables: Mapping[str, Any] | None,
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[None]:
        body: dict[str, Any] = {"persona": persona_body(persona)}
        if context is not None:
            body["context"] = context
        if variables is not None:
            plain = dict(variables) if isinstance(variables, Mapping) else variables
            body["variables"] = _jsonable(plain, "variables")  # not an object: the rules say so
        body = _with_extra(body, extra_body)
        self._check(SimulateBody, body, "simulate request")
        path = f"/realtime-assistants/builds/{_seg(assistant_id, 'assistant_id')}/simulate"
        return RequestSpec(
            "POST", path, _parse_nothing, body, idempotent=True, accept="text/event-stream"
        )

    def _spec_refine(
        self,
        assistant_id: str,
        owner_feedback: str,
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[RefineResponse]:
        body = _with_extra({"ownerFeedback": owner_feedback}, extra_body)
        self._check(RefineBody, body, "refine request")
        path = f"/realtime-assistants/builds/{_seg(assistant_id, 'assistant_id')}/refine"
        return RequestSpec("POST", path, _model_parser(RefineResponse), body)

    def _spec_text_to_speech(
        self,
        text: str,
        voice_id: str,
        output_format: str,
        phrase_replacement_config_id: str | None,
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[bytes]:
        body: dict[str, Any] = {"text": text, "voiceId": voice_id, "outputFormat": output_format}
        if phrase_replacement_config_id is not None:
            body["phraseReplacementConfigId"] = phrase_replacement_config_id
        body = _with_extra(body, extra_body)
        self._check(TextToSpeechBody, body, "text-to-speech request")
        return RequestSpec(
            "POST", "/synthesis/text-to-speech", _parse_bytes, body, idempotent=True, accept="*/*"
        )

    def _spec_create_phrase_replacement_config(
        self,
        phrase_replacements: Sequence[Mapping[str, str]] | Mapping[str, str],
        extra_body: Mapping[str, Any] | None,
    ) -> RequestSpec[PhraseReplacementConfig]:
        if isinstance(phrase_replacements, Mapping):
            items = [{"phrase": k, "replacement": v} for k, v in phrase_replacements.items()]
        else:
            items = [_jsonable(item, "phraseReplacements") for item in phrase_replacements]
        body = _with_extra({"phraseReplacements": items}, extra_body)
        self._check(PhraseReplacementBody, body, "phrase replacement config")
        return RequestSpec(
            "POST",
            "/synthesis/phrase-replacement-config",
            _model_parser(PhraseReplacementConfig),
            body,
        )

    def _spec_get_contact_list(
        self, list_id: str, extra_body: Mapping[str, Any] | None
    ) -> RequestSpec[ContactList]:
        return _read(f"/contact-lists/{_seg(list_id, 'list_id')}", ContactList, extra_body)
