"""LiteLLMModel through the real litellm against a scripted OpenAI-compatible server on loopback."""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from lomo_tui.models import remote
from lomo_tui.models.base import ModelError, ModelRequest
from lomo_tui.models.remote import LiteLLMModel, embed
from openai_stub import OpenAIStub, delayed, embeddings, error, reply, stream, tool_call

KEY = "sk-test"
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the workspace.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    },
}


pytestmark = pytest.mark.usefixtures("loopback_only")  # no test here reaches past 127.0.0.1 (conftest)


@pytest.fixture(scope="module")
def litellm(loopback_only: None) -> Any:
    """Import litellm once for the module (~6 s), plus a priced Claude-named model served by the stub."""
    module = remote.preload()
    module.register_model({"openai/claude-stub": {
        "litellm_provider": "openai", "mode": "chat", "supports_prompt_caching": True,
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "cache_read_input_token_cost": 1e-7,
    }})
    return module


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    with OpenAIStub() as running:
        yield running


@pytest.fixture
def stub(server: OpenAIStub, litellm: Any) -> OpenAIStub:
    server.reset()
    return server


def make(stub: OpenAIStub, name: str = "openai/stub-model", **options: Any) -> LiteLLMModel:
    options = {"timeout": 5, "backoff_base": 0.01, **options}
    return LiteLLMModel(name, api_base=stub.base_url, api_key=KEY, **options)


def ask(text: str = "hi", **fields: Any) -> ModelRequest:
    return ModelRequest(messages=[{"role": "system", "content": "You are Lomo."},
                                  {"role": "user", "content": text}], **fields)


def test_import_does_not_load_litellm() -> None:
    code = "import sys, lomo_tui.models.remote as r; assert 'litellm' not in sys.modules; assert not r.is_loaded()"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


async def test_plain_reply_with_usage(stub: OpenAIStub) -> None:
    stub.enqueue(reply("Hello, creator."))
    answer = await make(stub, extra={"temperature": 0.2}).complete(ask())
    assert remote.is_loaded()
    assert answer.content == "Hello, creator." and answer.tool_calls == []
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.cached_tokens) == (11, 7, 0)
    assert answer.usage.cost is None  # litellm has no price for stub-model
    assert answer.model == "openai/stub-model" and answer.latency_ms > 0
    [seen] = stub.requests
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["model"] == "stub-model" and "stream" not in seen.body and "tools" not in seen.body
    assert seen.body["messages"] == ask().messages  # no cache marks for a non-Claude model
    assert seen.body["temperature"] == 0.2 and KEY not in repr(make(stub))


def test_extra_may_not_take_over_retries() -> None:
    with pytest.raises(ValueError, match="num_retries"):
        LiteLLMModel("openai/stub-model", extra={"num_retries": 2})


async def test_tool_call_parsed_with_dict_arguments(stub: OpenAIStub) -> None:
    stub.enqueue(tool_call("search", {"q": "cats", "limit": 3}, call_id="call_42"))
    answer = await make(stub).complete(ask("find cats", tools=[SEARCH_TOOL]))
    [call] = answer.tool_calls
    assert (call.name, call.arguments, call.id) == ("search", {"q": "cats", "limit": 3}, "call_42")
    assert stub.requests[0].body["tools"] == [SEARCH_TOOL]


async def test_streamed_reply_reaches_on_token_in_order(stub: OpenAIStub) -> None:
    tokens = ["Once", " upon", " a", " time", "…"]
    stub.enqueue(stream(tokens))
    received: list[str] = []

    async def sink(text: str) -> None:
        received.append(text)

    answer = await make(stub).complete(ask(), on_token=sink)
    assert received == tokens and answer.content == "".join(tokens)
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (11, 7)
    body = stub.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_streamed_tool_call_is_assembled_from_deltas(stub: OpenAIStub) -> None:
    stub.enqueue(stream(["Searching"], tool=("search", {"q": "storyboard shot 2"})))
    received: list[str] = []
    answer = await make(stub).complete(ask(tools=[SEARCH_TOOL]), on_token=received.append)
    assert received == ["Searching"] and answer.content == "Searching"
    [call] = answer.tool_calls
    assert (call.name, call.arguments, call.id) == ("search", {"q": "storyboard shot 2"}, "call_1")


async def test_stream_cut_before_any_token_is_retried(stub: OpenAIStub) -> None:
    stub.enqueue(stream(["lost"], cut_after=1), stream(["Hello"]))
    received: list[str] = []
    answer = await make(stub).complete(ask(), on_token=received.append)
    assert received == ["Hello"] and answer.content == "Hello" and len(stub.requests) == 2


async def test_stream_cut_after_tokens_fails_without_retry(stub: OpenAIStub) -> None:
    stub.enqueue(stream(["Once", " upon"], cut_after=2), stream(["never sent"]))
    received: list[str] = []
    with pytest.raises(ModelError, match="broke off mid-stream — try again") as caught:
        await make(stub).complete(ask(), on_token=received.append)
    assert received == ["Once"] and caught.value.retryable and len(stub.requests) == 1


async def test_timeout_is_retried_once_then_fails(stub: OpenAIStub) -> None:
    stub.enqueue(*[delayed(reply("too late"), 30)] * 3)
    with pytest.raises(ModelError) as caught:
        await make(stub, timeout=0.3).complete(ask())
    assert "did not answer within 0.3s" in str(caught.value) and caught.value.retryable
    assert len(stub.requests) == 2 and stub.pending == 1


async def test_request_timeout_lowers_the_model_timeout(stub: OpenAIStub) -> None:
    stub.enqueue(*[delayed(reply("too late"), 30)] * 2)
    with pytest.raises(ModelError, match="within 0.2s"):
        await make(stub, timeout=60).complete(ask(timeout=0.2))


async def test_429_then_success_honours_retry_after(stub: OpenAIStub) -> None:
    stub.enqueue(error(429, "Rate limit reached", headers={"Retry-After": "0.3"}), reply("made it"))
    answer = await make(stub).complete(ask())
    assert answer.content == "made it"
    first, second = stub.requests
    assert second.at - first.at >= 0.29  # waited as told, not the 0.01 s backoff


async def test_retry_after_is_capped(stub: OpenAIStub) -> None:
    stub.enqueue(error(429, "Rate limit reached", headers={"Retry-After": "3600"}), reply("made it"))
    answer = await asyncio.wait_for(make(stub, backoff_cap=0.05).complete(ask()), timeout=10)
    assert answer.content == "made it" and len(stub.requests) == 2


async def test_500_then_success(stub: OpenAIStub) -> None:
    stub.enqueue(error(500, "upstream exploded"), reply("recovered"))
    answer = await make(stub).complete(ask())
    assert answer.content == "recovered" and len(stub.requests) == 2


async def test_persistent_5xx_gives_up_after_max_attempts(stub: OpenAIStub) -> None:
    stub.enqueue(*[error(503, "overloaded")] * 4)
    with pytest.raises(ModelError) as caught:
        await make(stub, max_attempts=3).complete(ask())
    message = str(caught.value)
    assert "(503)" in message and "gave up after 3 attempts" in message and caught.value.retryable
    assert len(stub.requests) == 3 and "\n" not in message


async def test_401_names_the_key_setting_without_the_key(stub: OpenAIStub) -> None:
    stub.enqueue(error(401, f"Incorrect API key provided: {KEY}."), reply("never sent"))
    with pytest.raises(ModelError) as caught:
        await make(stub).complete(ask())
    message = str(caught.value)
    assert "API key" in message and "OPENAI_API_KEY" in message and "401" in message
    assert KEY not in message and not caught.value.retryable
    assert len(stub.requests) == 1


async def test_other_4xx_not_retried_and_key_scrubbed(stub: OpenAIStub) -> None:
    stub.enqueue(error(400, f"Unknown parameter 'temprature' (request by {KEY})"), reply("never sent"))
    with pytest.raises(ModelError) as caught:
        await make(stub).complete(ask())
    message = str(caught.value)
    assert message.startswith("Provider rejected the request (400): ") and "temprature" in message
    assert KEY not in message and "litellm." not in message and not caught.value.retryable
    assert len(stub.requests) == 1


@pytest.mark.parametrize("arguments", ['{"q": "cats"', "[1, 2]"])
async def test_malformed_tool_arguments_name_the_tool(stub: OpenAIStub, arguments: str) -> None:
    stub.enqueue(tool_call("search", arguments))
    with pytest.raises(ModelError, match="malformed tool-call arguments for search") as caught:
        await make(stub).complete(ask(tools=[SEARCH_TOOL]))
    assert not caught.value.retryable and len(stub.requests) == 1


async def test_unreachable_server_is_a_connection_error(litellm: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the call: nothing listens there
    model = LiteLLMModel("openai/stub-model", api_base=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                         timeout=5, max_attempts=2, backoff_base=0.01)
    with pytest.raises(ModelError, match="Could not reach") as caught:
        await model.complete(ask())
    assert caught.value.retryable and "gave up after 2 attempts" in str(caught.value)


async def test_claude_prompt_prefix_is_marked_for_caching(stub: OpenAIStub) -> None:
    usage = {"prompt_tokens": 2000, "completion_tokens": 10, "total_tokens": 2010,
             "prompt_tokens_details": {"cached_tokens": 1536}}
    stub.enqueue(reply("cached", usage=usage))
    request = ModelRequest(messages=[{"role": "system", "content": "Rules."},
                                     {"role": "system", "content": "Profile."},
                                     {"role": "user", "content": "hi"}])
    original = [dict(m) for m in request.messages]
    answer = await make(stub, "openai/claude-stub").complete(request)
    sent = stub.requests[0].body["messages"]
    assert sent[0] == {"role": "system", "content": "Rules."}
    assert sent[1]["content"] == [{"type": "text", "text": "Profile.", "cache_control": {"type": "ephemeral"}}]
    assert sent[2] == {"role": "user", "content": "hi"}
    assert request.messages == original  # the caller's messages are untouched
    assert answer.usage.cached_tokens == 1536
    assert answer.usage.cost is not None and answer.usage.cost > 0


def test_cache_breakpoint_goes_on_the_last_block_of_list_content() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    messages = [{"role": "system", "content": blocks}, {"role": "user", "content": "hi"}]
    marked = remote._with_cache_breakpoint(messages)
    assert marked[0]["content"][-1] == {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in blocks[-1] and marked[1] is messages[1]
    no_system = [{"role": "user", "content": "hi"}]
    assert remote._with_cache_breakpoint(no_system) is no_system


async def test_embeddings_in_order(stub: OpenAIStub) -> None:
    stub.enqueue(embeddings([[0.1, 0.2], [0.3, 0.4]]))
    vectors = await embed(["cat", "dog"], "openai/stub-embed", api_base=stub.base_url, api_key=KEY, timeout=5)
    assert vectors == [[0.1, 0.2], [0.3, 0.4]]
    [seen] = stub.requests
    assert seen.path == "/v1/embeddings" and seen.body["input"] == ["cat", "dog"]
    assert await embed([], "openai/stub-embed", api_base=stub.base_url) == [] and len(stub.requests) == 1


async def test_embedding_errors_use_the_same_policy(stub: OpenAIStub) -> None:
    stub.enqueue(error(429, "slow down", headers={"Retry-After": "0"}), embeddings([[1.0]]),
                 error(401, "bad key"))
    assert await embed(["x"], "openai/stub-embed", api_base=stub.base_url, api_key=KEY, timeout=5) == [[1.0]]
    with pytest.raises(ModelError, match="API key"):
        await embed(["x"], "openai/stub-embed", api_base=stub.base_url, api_key=KEY, timeout=5)
    assert len(stub.requests) == 3


async def test_a_missing_api_key_is_named_and_not_retried(stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = remote.LiteLLMModel("openai/stub-model", api_base=stub.base_url, backoff_base=0.01)
    with pytest.raises(ModelError, match="No API key for openai/stub-model — set OPENAI_API_KEY") as caught:
        await model.complete(ModelRequest(messages=[{"role": "user", "content": "hi"}]))
    assert not caught.value.retryable and len(stub.requests) == 0


async def test_a_provider_failure_is_worded_in_the_readers_language(stub: OpenAIStub,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = remote.LiteLLMModel("openai/stub-model", api_base=stub.base_url, backoff_base=0.01)
    with pytest.raises(ModelError) as caught:
        await model.complete(ModelRequest(messages=[{"role": "user", "content": "hi"}]))
    assert caught.value.text("en") == str(caught.value)  # the log keeps the English
    assert caught.value.text("zh").startswith("openai/stub-model 没有 API 密钥——请设置 OPENAI_API_KEY")
    assert "[providers.openai]" in caught.value.text("ru") and "Нет API-ключа" in caught.value.text("ru")
