"""The emulator with an OpenAI-compatible LLM backend, end to end over real loopback sockets."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evalkit import Client, Done
from evalkit.emulator import serve
from evalkit.emulator._llm_backend import LlmBackend
from tests.loopback import serve_app

LLM_KEY = "sk-fake-llm-key-0000"


def fake_openai(seen: list[dict[str, object]]) -> Starlette:
    """Answers as the agent or the caller, by the system prompt; the caller ends on turn 4."""

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({"auth": request.headers.get("authorization"), **body})
        system = body["messages"][0]["content"]
        turns = len(body["messages"]) - 1
        if (
            "Ayesha" in system
            and "appointment" in system.lower()
            and "caller" not in system[:40].lower()
        ):
            text = f"Assalam o alaikum Ayesha ji, appointment kal 5 baje hai. ({turns})"
        else:
            text = "Jee theek hai, shukriya. [END]" if turns >= 3 else "Jee, boliye?"
        return JSONResponse({"choices": [{"message": {"role": "assistant", "content": text}}]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def test_llm_backend_plays_both_sides() -> None:
    seen: list[dict[str, object]] = []
    with serve_app(fake_openai(seen)) as llm_url:
        backend = LlmBackend(llm_url + "/v1", "fake-model", api_key=LLM_KEY)
        with (
            serve(time_scale=0.01, seed=1, backend=backend) as emu,
            Client(emu.base_url, emu.api_key) as client,
        ):
            built = emu.build(
                "LLM reminder",
                {"context": "clinic", "sampleRows": [{"customer_name": "Ayesha"}]},
                "You remind {{customer_name}} of the appointment.",
                initial_greeting=True,
            )
            transcript = client.simulate(
                built["realtimeAssistantId"],
                {"label": "cooperative", "behavior": "You are the caller. Answer briefly."},
            ).collect()
    assert isinstance(transcript.outcome, Done)
    texts = [t.text for t in transcript.turns]
    assert texts, "no turns"
    assert all("[END]" not in t for t in texts)  # the end token is stripped
    assert [t.role for t in transcript.turns] == ["agent", "caller"] * (len(texts) // 2)
    assert texts[-1] == "Jee theek hai, shukriya."  # the caller ended the call
    assert any("Ayesha" in t for t in texts)  # the agent's prompt had the variable substituted
    assert seen, "the backend was never called"
    assert all(call["model"] == "fake-model" for call in seen)
    assert all(call["auth"] == f"Bearer {LLM_KEY}" for call in seen)
