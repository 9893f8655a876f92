"""Hostile input: lone surrogates and integers of 309+ digits get the spec's 400 before anything
is stored; an unexpected error answers 500 with ``Connection: close``; one keep-alive
connection survives a mix of hostile and ordinary requests."""

from __future__ import annotations

import httpx
import pytest

from evalkit.emulator import EmulatorServer

from .helpers import BRIEF, create_assistant, make_config

SURROGATE = '"\\ud800"'  # JSON text of a lone high surrogate
DIGITS = (309, 1000, 4300, 4301, 5000)


def _surrogate_cases(assistant_id: str) -> list[tuple[str, str]]:
    ra = "/realtime-assistants"
    config = '{"agent": {"instructions": "hi"}}'
    return [
        (ra, '{"name": ' + SURROGATE + ', "config": ' + config + "}"),
        (ra, '{"name": "x", "config": {"agent": {"instructions": "hi"}, ' + SURROGATE + ": 1}}"),
        (f"{ra}/{assistant_id}", '{"description": ' + SURROGATE + "}"),
        (f"{ra}/{assistant_id}/createSession", '{"participantName": ' + SURROGATE + "}"),
        (f"{ra}/builds/{assistant_id}/simulate", '{"variables": {' + SURROGATE + ': "v"}}'),
        (f"{ra}/builds/{assistant_id}/refine", '{"ownerFeedback": ' + SURROGATE + "}"),
        ("/synthesis/text-to-speech", '{"text": ' + SURROGATE + ', "voiceId": "v_8eelc901"}'),
        (
            "/synthesis/phrase-replacement-config",
            '{"phraseReplacements": [{"phrase": "a", "replacement": ' + SURROGATE + "}]}",
        ),
    ]


@pytest.mark.parametrize("case", range(8), ids=lambda i: f"route{i}")
def test_lone_surrogates_are_refused_before_anything_is_stored(
    emu: EmulatorServer, client: httpx.Client, case: int
) -> None:
    assistant_id = emu.build("Hostile", BRIEF, "Remind {{name}}.")["realtimeAssistantId"]
    path, body = _surrogate_cases(assistant_id)[case]
    before = client.get("/realtime-assistants").json()
    response = client.post(path, content=body.encode())
    assert response.status_code == 400, response.text
    assert "surrogate" in str(response.json()["message"])
    after = client.get("/realtime-assistants")
    assert after.status_code == 200
    assert after.json() == before
    assert emu.emulator.last_resort.count == 0


@pytest.mark.parametrize("digits", DIGITS)
def test_huge_integers_are_refused(emu: EmulatorServer, client: httpx.Client, digits: int) -> None:
    huge = "9" * digits
    admin = httpx.Client(
        base_url=emu.admin_url, headers={"Authorization": f"Bearer {emu.api_key}"}, timeout=30
    )
    with admin:
        for path, body in (("/faults", '{"dropRate": %s}'), ("/credits", '{"credits": %s}')):
            response = admin.put(path, content=(body % huge).encode())
            assert response.status_code == 400, (path, response.text)
            assert response.json()["statusCode"] == 400
        assert admin.get("/faults").json()["dropRate"] == 0
    config = f'{{"agent": {{"instructions": "hi"}}, "session": {{"ttl": {huge}}}}}'
    response = client.post("/realtime-assistants", content=f'{{"name": "x", "config": {config}}}')
    assert response.status_code == 400
    assert client.get("/realtime-assistants").json() == []
    assert emu.emulator.last_resort.count == 0


def test_an_integer_of_308_digits_is_still_a_number(client: httpx.Client) -> None:
    body = f'{{"name": "x", "config": {{"agent": {{"instructions": "hi"}}, "n": 1{"0" * 307}}}}}'
    assert client.post("/realtime-assistants", content=body).status_code == 201


def test_an_unexpected_error_closes_its_connection_cleanly(
    emu: EmulatorServer, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(project_id: str) -> list[object]:
        raise RuntimeError("planted")

    monkeypatch.setattr(emu.emulator.state, "list_assistants", broken)
    response = client.get("/realtime-assistants")
    assert response.status_code == 500
    assert response.headers["connection"] == "close"
    assert response.json()["statusCode"] == 500
    monkeypatch.undo()
    assert client.get("/realtime-assistants").status_code == 200  # a new connection
    assert emu.emulator.last_resort.count == 1


def test_one_keep_alive_connection_answers_hostile_and_ordinary_requests(
    emu: EmulatorServer,
) -> None:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    headers = {"Authorization": f"Bearer {emu.api_key}"}
    with httpx.Client(base_url=emu.base_url, headers=headers, limits=limits, timeout=30) as c:
        assistant = create_assistant(c)
        hostile = [body for _, body in _surrogate_cases(assistant["realtimeAssistantId"])]
        answered = 0
        ports = set()
        for i in range(60):
            if i % 3 == 0:
                r = c.post("/realtime-assistants", content=hostile[i % len(hostile)].encode())
                assert r.status_code == 400
            elif i % 3 == 1:
                r = c.post(
                    "/realtime-assistants", content=b'{"config": {"n": ' + b"9" * 5000 + b"}}"
                )
                assert r.status_code == 400
            else:
                r = c.post("/realtime-assistants", json={"name": f"a{i}", "config": make_config()})
                assert r.status_code == 201
            answered += 1
            ports.add(r.extensions["network_stream"].get_extra_info("client_addr")[1])
        listed = c.get("/realtime-assistants")
    assert answered == 60
    assert len(ports) == 1  # every request went over the same connection
    assert listed.status_code == 200
    assert len(listed.json()) == 1 + 20
    assert emu.emulator.last_resort.count == 0
