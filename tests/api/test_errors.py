"""Error envelopes to typed exceptions, for every row of the spec's Errors table (respx mocks)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import respx

from evalkit.api import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    EvalkitError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    ServiceUnavailableError,
    UnexpectedResponseError,
)

from .twins import BASE, KEY, run_on

AID = "3f1c2b9e-8a44-4c1e-9d57-0b6a1f2e7c10"
LID = "9b2e6d1a-1f0c-4e7b-8a3d-5c4b3a291807"
PERSONA = {"label": "Busy", "behavior": "In a hurry.", "path": "negative"}
RATE_LIMITED = "Rate limit exceeded, please try again later"


@dataclass
class Twin:
    """Runs one call through Client or AsyncClient, over a respx router.

    ``router=None`` uses httpx's default transport (which ``respx.mock`` patches).
    """

    kind: str

    def run(
        self,
        fn: Callable[[Any], Any],
        router: respx.Router | None = None,
        api_key: str | None = KEY,
    ) -> Any:
        kwargs: dict[str, Any] = {"retry": RetryPolicy.never()}
        if router is not None:
            kwargs["transport"] = httpx.MockTransport(router.handler)
        return run_on(self.kind, fn, BASE, api_key, **kwargs)


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin(request.param)


@pytest.fixture
def service() -> Iterator[respx.Router]:
    router = respx.Router(base_url=BASE, assert_all_mocked=True)
    yield router
    router.assert_all_called()


# operation name -> (HTTP method, path, call)
OPERATIONS: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
    "E1": ("GET", "/realtime-assistants", lambda c: c.list_assistants()),
    "E2": (
        "POST",
        "/realtime-assistants",
        lambda c: c.create_assistant("n", {"agent": {"instructions": "x"}}),
    ),
    "E3": ("POST", f"/realtime-assistants/{AID}", lambda c: c.update_assistant(AID, public=True)),
    "E4": ("DELETE", f"/realtime-assistants/{AID}", lambda c: c.delete_assistant(AID)),
    "E5": (
        "GET",
        f"/realtime-assistants/{AID}/metadata",
        lambda c: c.get_assistant_metadata(AID),
    ),
    "E6": (
        "POST",
        f"/realtime-assistants/{AID}/createSession",
        lambda c: c.create_session(AID, "A"),
    ),
    "E7": (
        "POST",
        f"/realtime-assistants/{AID}/createPublicSession",
        lambda c: c.create_public_session(AID, "A"),
    ),
    "E8": (
        "POST",
        f"/realtime-assistants/{AID}/public-session",
        lambda c: c.open_public_session(AID, "A"),
    ),
    "E9": (
        "POST",
        f"/realtime-assistants/builds/{AID}/simulate",
        lambda c: c.simulate(AID, PERSONA).collect(),
    ),
    "E10": ("POST", f"/realtime-assistants/builds/{AID}/refine", lambda c: c.refine(AID, "x")),
    "E11": (
        "POST",
        "/synthesis/text-to-speech",
        lambda c: c.text_to_speech("ok", "v_8eelc901", "MP3_22050_32"),
    ),
    "E12": (
        "POST",
        "/synthesis/phrase-replacement-config",
        lambda c: c.create_phrase_replacement_config([{"phrase": "a", "replacement": "b"}]),
    ),
    "E13": ("GET", f"/contact-lists/{LID}", lambda c: c.get_contact_list(LID)),
}


def raised(
    twin: Twin, service: respx.Router, op: str, response: httpx.Response, **kw: Any
) -> ApiError:
    method, path, call = OPERATIONS[op]
    route = service.route(method=method, path=path)
    route.mock(return_value=response)
    with pytest.raises(ApiError) as info:
        twin.run(call, service, **kw)
    assert route.call_count == 1
    return info.value


def envelope(status: int, message: Any, error: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "statusCode": status}
    if error is not None:
        body["error"] = error
    return body


# --------------------------------------------------------------------------- the Errors table

# (operation, status, message, error field, exception class, messages exposed)
TABLE: list[tuple[str, int, Any, str | None, type[ApiError], list[str]]] = [
    (
        "E10",
        400,
        [
            "ownerFeedback must be shorter than or equal to 2000 characters",
            "ownerFeedback must be a string",
        ],
        "Bad Request",
        BadRequestError,
        [
            "ownerFeedback must be shorter than or equal to 2000 characters",
            "ownerFeedback must be a string",
        ],
    ),
    (
        "E8",
        400,
        ["participantName should not be empty"],
        "Bad Request",
        BadRequestError,
        ["participantName should not be empty"],
    ),
    (
        "E2",
        400,
        "grading.scorecard rule points must total 100",
        "Bad Request",
        BadRequestError,
        ["grading.scorecard rule points must total 100"],
    ),
    (
        "E1",
        401,
        "invalid authorization",
        "Unauthorized",
        AuthenticationError,
        ["invalid authorization"],
    ),
    (
        "E10",
        401,
        "invalid authorization",
        "Unauthorized",
        AuthenticationError,
        ["invalid authorization"],
    ),
    (
        "E8",
        402,
        "Insufficient credits to start a realtime session",
        "Payment Required",
        PaymentRequiredError,
        ["Insufficient credits to start a realtime session"],
    ),
    ("E1", 403, "Forbidden resource", "Forbidden", PermissionDeniedError, ["Forbidden resource"]),
    ("E13", 403, "Forbidden resource", "Forbidden", PermissionDeniedError, ["Forbidden resource"]),
    (
        "E8",
        403,
        "Assistant is not available publicly",
        "Forbidden",
        PermissionDeniedError,
        ["Assistant is not available publicly"],
    ),
    (
        "E7",
        403,
        "Assistant is not available publicly",
        "Forbidden",
        PermissionDeniedError,
        ["Assistant is not available publicly"],
    ),
    (
        "E10",
        404,
        "Assistant has no build artifacts to refine",
        "Not Found",
        NotFoundError,
        ["Assistant has no build artifacts to refine"],
    ),
    (
        "E8",
        404,
        f"Realtime assistant not found: {AID}",
        "Not Found",
        NotFoundError,
        [f"Realtime assistant not found: {AID}"],
    ),
    (
        "E7",
        404,
        f"Realtime assistant not found: {AID}",
        "Not Found",
        NotFoundError,
        [f"Realtime assistant not found: {AID}"],
    ),
    (
        "E13",
        404,
        f"Contact list not found: {LID}",
        "Not Found",
        NotFoundError,
        [f"Contact list not found: {LID}"],
    ),
    (
        "E8",
        503,
        f"Published version 3 of assistant {AID} is not readable yet",
        None,
        ServiceUnavailableError,
        [f"Published version 3 of assistant {AID} is not readable yet"],
    ),
]


@pytest.mark.parametrize(
    ("op", "status", "message", "error", "cls", "messages"),
    TABLE,
    ids=[f"{row[0]}-{row[1]}-{i}" for i, row in enumerate(TABLE)],
)
def test_errors_table(
    twin: Twin,
    service: respx.Router,
    op: str,
    status: int,
    message: Any,
    error: str | None,
    cls: type[ApiError],
    messages: list[str],
) -> None:
    api_key = None if op in ("E7", "E8") else KEY
    body = envelope(status, message, error)
    exc = raised(twin, service, op, httpx.Response(status, json=body), api_key=api_key)
    assert type(exc) is cls
    assert exc.status_code == status
    assert exc.messages == messages
    assert exc.error == error
    assert exc.body == body
    assert exc.method == OPERATIONS[op][0]
    assert exc.url is not None
    assert exc.url.endswith(OPERATIONS[op][1])
    for m in messages:
        assert m in str(exc)


def test_503_without_error_field(twin: Twin, service: respx.Router) -> None:
    body = {
        "message": f"Published version 7 of assistant {AID} is not readable yet",
        "statusCode": 503,
    }
    exc = raised(twin, service, "E8", httpx.Response(503, json=body), api_key=None)
    assert isinstance(exc, ServiceUnavailableError)
    assert exc.error is None
    assert str(exc).startswith("503")


@pytest.mark.parametrize(("op", "status"), [("E1", 500), ("E2", 502), ("E10", 504), ("E12", 599)])
def test_other_5xx_are_server_errors(
    twin: Twin, service: respx.Router, op: str, status: int
) -> None:
    body = envelope(status, "Internal server error", "Internal Server Error")
    exc = raised(twin, service, op, httpx.Response(status, json=body))
    assert type(exc) is ServerError
    assert exc.status_code == status
    assert exc.messages == ["Internal server error"]


@pytest.mark.parametrize(("status", "op"), [(418, "E1"), (409, "E2"), (422, "E10"), (410, "E13")])
def test_unlisted_4xx_is_a_plain_api_error(
    twin: Twin, service: respx.Router, status: int, op: str
) -> None:
    exc = raised(twin, service, op, httpx.Response(status, json=envelope(status, "nope", "Teapot")))
    assert type(exc) is ApiError
    assert exc.status_code == status
    assert exc.messages == ["nope"]


def test_429_is_a_rate_limit_error(twin: Twin, service: respx.Router) -> None:
    response = httpx.Response(
        429,
        json=envelope(429, "ThrottlerException: Too Many Requests", "Too Many Requests"),
        headers={"retry-after": "12"},
    )
    exc = raised(twin, service, "E1", response)
    assert isinstance(exc, RateLimitError)
    assert exc.retry_after == 12.0


@pytest.mark.parametrize("op", sorted(OPERATIONS, key=lambda k: int(k[1:])))
def test_every_operation_maps_401_on_the_default_transport(twin: Twin, op: str) -> None:
    method, path, call = OPERATIONS[op]
    body = envelope(401, "invalid authorization", "Unauthorized")
    with respx.mock(base_url=BASE, assert_all_called=True) as mock:
        route = mock.route(method=method, path=path).mock(
            return_value=httpx.Response(401, json=body)
        )
        with pytest.raises(AuthenticationError) as info:
            twin.run(call)
    assert route.call_count == 1
    assert info.value.messages == ["invalid authorization"]
    assert info.value.error == "Unauthorized"


# --------------------------------------------------------------------------- message shapes


@pytest.mark.parametrize(
    ("message", "messages"),
    [
        ("one", ["one"]),
        (["one"], ["one"]),
        (["one", "two", "three"], ["one", "two", "three"]),
        ([], []),
        (None, []),
    ],
)
def test_message_is_always_a_list(
    twin: Twin, service: respx.Router, message: Any, messages: list[str]
) -> None:
    exc = raised(
        twin, service, "E10", httpx.Response(400, json=envelope(400, message, "Bad Request"))
    )
    assert isinstance(exc, BadRequestError)
    assert exc.messages == messages


def test_missing_message_key(twin: Twin, service: respx.Router) -> None:
    exc = raised(twin, service, "E1", httpx.Response(403, json={"statusCode": 403}))
    assert isinstance(exc, PermissionDeniedError)
    assert exc.messages == []
    assert exc.error is None
    assert "(no message)" in str(exc)


# --------------------------------------------------------------------------- synthesis errors


@pytest.mark.parametrize("op", ["E11", "E12"])
@pytest.mark.parametrize(
    ("status", "cls"), [(400, BadRequestError), (401, AuthenticationError), (500, ServerError)]
)
def test_synthesis_errors_shaped_message_only(
    twin: Twin, service: respx.Router, op: str, status: int, cls: type[ApiError]
) -> None:
    exc = raised(twin, service, op, httpx.Response(status, json={"message": "Voice not available"}))
    assert type(exc) is cls
    assert exc.messages == ["Voice not available"]
    assert exc.error is None


@pytest.mark.parametrize("op", ["E11", "E12"])
@pytest.mark.parametrize("status", [400, 403, 429, 500, 503])
def test_synthesis_rate_limit_message_whatever_the_status(
    twin: Twin, service: respx.Router, op: str, status: int
) -> None:
    exc = raised(twin, service, op, httpx.Response(status, json={"message": RATE_LIMITED}))
    assert isinstance(exc, RateLimitError)
    assert exc.status_code == status
    assert exc.messages == [RATE_LIMITED]


def test_rate_limit_message_inside_an_array(twin: Twin, service: respx.Router) -> None:
    exc = raised(twin, service, "E11", httpx.Response(400, json={"message": [RATE_LIMITED]}))
    assert isinstance(exc, RateLimitError)


def test_similar_message_is_not_a_rate_limit(twin: Twin, service: respx.Router) -> None:
    exc = raised(
        twin, service, "E11", httpx.Response(400, json={"message": "Rate limit settings updated"})
    )
    assert type(exc) is BadRequestError


# --------------------------------------------------------------------------- non-JSON error bodies


@pytest.mark.parametrize(
    ("status", "content", "cls", "messages"),
    [
        (
            502,
            b"<html><body>Bad Gateway</body></html>",
            ServerError,
            ["<html><body>Bad Gateway</body></html>"],
        ),
        (500, b"", ServerError, []),
        (503, b"upstream connect error", ServiceUnavailableError, ["upstream connect error"]),
        (400, b"not json {", BadRequestError, ["not json {"]),
        (404, b"   \n", NotFoundError, []),
    ],
)
def test_non_json_error_bodies(
    twin: Twin,
    service: respx.Router,
    status: int,
    content: bytes,
    cls: type[ApiError],
    messages: list[str],
) -> None:
    response = httpx.Response(status, content=content, headers={"content-type": "text/html"})
    exc = raised(twin, service, "E13", response)
    assert type(exc) is cls
    assert exc.messages == messages
    assert exc.error is None


def test_json_error_body_that_is_not_an_object(twin: Twin, service: respx.Router) -> None:
    exc = raised(twin, service, "E1", httpx.Response(500, json=["boom"]))
    assert isinstance(exc, ServerError)
    assert len(exc.messages) == 1
    assert "boom" in exc.messages[0]


def test_long_non_json_body_is_truncated(twin: Twin, service: respx.Router) -> None:
    exc = raised(twin, service, "E1", httpx.Response(500, text="x" * 10_000))
    assert len(exc.messages[0]) <= 500


def test_simulate_error_status_before_streaming(twin: Twin, service: respx.Router) -> None:
    body = envelope(400, ["unsupported provider"], "Bad Request")
    exc = raised(twin, service, "E9", httpx.Response(400, json=body))
    assert isinstance(exc, BadRequestError)
    assert exc.messages == ["unsupported provider"]


# --------------------------------------------------------------------------- unexpected success


@pytest.mark.parametrize(
    ("op", "response"),
    [
        ("E1", httpx.Response(200, json={"items": []})),
        ("E1", httpx.Response(200, json=[{"name": "no id"}])),
        ("E2", httpx.Response(201, json={"ok": True})),
        ("E5", httpx.Response(200, text="<html>login</html>")),
        ("E6", httpx.Response(201, json={"token": "t"})),
        ("E10", httpx.Response(200, content=b"")),
        ("E12", httpx.Response(201, json={"configId": "c"})),
        ("E13", httpx.Response(200, json={"listId": LID, "name": "n"})),
    ],
)
def test_unexpected_success_body(
    twin: Twin, service: respx.Router, op: str, response: httpx.Response
) -> None:
    method, path, call = OPERATIONS[op]
    service.route(method=method, path=path).mock(return_value=response)
    with pytest.raises(UnexpectedResponseError) as info:
        twin.run(call, service)
    assert path in str(info.value)


def test_simulate_success_that_is_not_an_event_stream(twin: Twin, service: respx.Router) -> None:
    method, path, call = OPERATIONS["E9"]
    service.route(method=method, path=path).mock(
        return_value=httpx.Response(200, json={"transcript": []})
    )
    with pytest.raises(UnexpectedResponseError, match="event stream"):
        twin.run(call, service)


# --------------------------------------------------------------------------- the tree


@pytest.mark.parametrize(
    "cls",
    [
        BadRequestError,
        AuthenticationError,
        PaymentRequiredError,
        PermissionDeniedError,
        NotFoundError,
        RateLimitError,
        ServiceUnavailableError,
        ServerError,
    ],
)
def test_every_status_error_is_an_api_error(cls: type[ApiError]) -> None:
    assert issubclass(cls, ApiError)
    assert issubclass(cls, EvalkitError)
    assert not issubclass(UnexpectedResponseError, ApiError)
