"""Model agents over HTTP, configured by environment variables.

* :class:`OpenAIChatAgent` — an OpenAI-compatible ``/chat/completions`` endpoint serving a
  UI-TARS-style model (e.g. vLLM): screenshots go up as images, text replies such as
  ``Thought: … Action: click(start_box='(100,200)')`` come back and are parsed.
* :class:`AnthropicAgent` — Anthropic's Messages API with the computer toolset (or one of
  the two single ``computer`` tools before it).
* :class:`OpenAIComputerAgent` — OpenAI's Responses API with the computer-use tool.

Each speaks plain JSON over HTTP (the standard library's client), so any server with the same
wire format works: a proxy, a local model server, or the fake server the tests use. The wire
formats themselves (prompts, tools, content blocks, requests) are the adapters' (:mod:`vdesk.adapters`);
these agents hold the conversation and the connection. Every
request failure or unreadable reply raises :class:`AgentError` saying what the server said.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vdesk.actions import BaseAction, validation_message
from vdesk.adapters import anthropic as anthropic_adapter, openai as openai_adapter, uitars
from vdesk.coords import ImageSpace, Screen, anthropic_target
from vdesk.errors import AgentError, InvalidAction
from vdesk.harness.agents.base import Agent, AgentReply
from vdesk.harness.env import Observation
from vdesk.harness.tasks import Task
from vdesk.encoding import encode

ERROR_BODY_LIMIT = 300


def post_json(url: str, payload: dict[str, Any], headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """POST ``payload`` as JSON and return the JSON answer; :class:`AgentError` otherwise."""
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:ERROR_BODY_LIMIT]
        raise AgentError(f"{url} answered HTTP {error.code}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise AgentError(f"cannot reach {url}: {reason}") from None
    try:
        answer = json.loads(body)
    except json.JSONDecodeError:
        raise AgentError(f"{url} answered with something that is not JSON: {body[:ERROR_BODY_LIMIT]!r}") from None
    if not isinstance(answer, dict):
        raise AgentError(f"{url} answered with JSON that is not an object: {body[:ERROR_BODY_LIMIT]!r}")
    return answer


def data_url(observation: Observation) -> str:
    return f"data:image/png;base64,{observation.frame_base64()}"


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    timeout: float = Field(default=120.0, gt=0)

    @classmethod
    def read(cls, values: dict[str, str | None]):  # type: ignore[no-untyped-def]
        """Validate settings gathered from environment variables; errors name the variable."""
        try:
            return cls.model_validate({k: v for k, v in values.items() if v is not None})
        except ValidationError as error:
            raise AgentError(f"{cls.__name__} from the environment: {validation_message(error)}") from None


def _failures(observation: Observation) -> str | None:
    """What went wrong with the previous step's actions, for the model to read."""
    failed = [r.error_message or "failed" for r in observation.results if r.status != "success"]
    return "; ".join(failed) if failed else None


# -- UI-TARS over an OpenAI-compatible chat endpoint ------------------------------------------
class ChatSettings(_Settings):
    """``VDESK_CHAT_BASE_URL`` (default ``http://127.0.0.1:8000/v1``), ``VDESK_CHAT_MODEL``,
    ``VDESK_CHAT_API_KEY``, ``VDESK_CHAT_COORDINATES`` (``grid`` or ``smart_resize``),
    ``VDESK_CHAT_HISTORY`` (screenshots kept in the prompt), ``VDESK_AGENT_TIMEOUT``."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "ui-tars"
    api_key: str | None = None
    coordinates: uitars.Mode = "grid"
    history: int = Field(default=5, ge=1, le=50)
    max_tokens: int = Field(default=1024, ge=1)

    @classmethod
    def from_env(cls) -> ChatSettings:
        return cls.read({"base_url": _env("VDESK_CHAT_BASE_URL"), "model": _env("VDESK_CHAT_MODEL"),
                         "api_key": _env("VDESK_CHAT_API_KEY"), "coordinates": _env("VDESK_CHAT_COORDINATES"),
                         "history": _env("VDESK_CHAT_HISTORY"), "timeout": _env("VDESK_AGENT_TIMEOUT")})


class OpenAIChatAgent(Agent):
    """A UI-TARS-style model behind an OpenAI-compatible chat endpoint."""

    name = "openai-chat"

    def __init__(self, settings: ChatSettings) -> None:
        self.settings = settings
        self._instruction = ""
        self._turns: list[tuple[str, str | None]] = []  # (screenshot data URL, the model's reply)

    @classmethod
    def from_env(cls) -> OpenAIChatAgent:
        return cls(ChatSettings.from_env())

    def reset(self, task: Task) -> None:
        self._instruction, self._turns = task.instruction, []

    def act(self, observation: Observation) -> AgentReply:
        self._turns.append((data_url(observation), None))
        answer = post_json(f"{self.settings.base_url.rstrip('/')}/chat/completions", self._request(observation),
                           self._headers(), self.settings.timeout)
        text = _chat_text(answer)
        self._turns[-1] = (self._turns[-1][0], text)
        return self._reply(text, observation)

    def _reply(self, text: str, observation: Observation) -> AgentReply:
        """The model's text read as actions (UI-TARS's format here)."""
        try:
            parsed = uitars.parse(text, mode=self.settings.coordinates, image=observation.image_space)
        except InvalidAction as error:
            raise AgentError(f"the model's reply could not be parsed: {error}") from None
        return AgentReply(parsed.actions, raw=text, thought=parsed.thought)

    def _request(self, observation: Observation) -> dict[str, Any]:
        note = None
        if (failure := _failures(observation)) or observation.user_reply:
            note = f"The last action failed: {failure}" if failure else f"The user answered: {observation.user_reply}"
        if observation.text:  # the tree or the marks (DesktopEnv's observation mode)
            note = f"{note}\n\n{observation.text}" if note else observation.text
        messages = uitars.chat_messages(self._instruction, self._turns, history=self.settings.history, note=note)
        return uitars.chat_request(self.settings.model, messages, self.settings.max_tokens)

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}


def _chat_text(answer: dict[str, Any]) -> str:
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise AgentError(f"a chat completion without choices[0].message.content: {json.dumps(answer)[:ERROR_BODY_LIMIT]}") from None
    if not isinstance(content, str):
        raise AgentError(f"a chat completion whose content is not text: {json.dumps(content)[:ERROR_BODY_LIMIT]}")
    return content


# -- Anthropic computer use -------------------------------------------------------------------
class AnthropicSettings(_Settings):
    """``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``),
    ``VDESK_ANTHROPIC_MODEL``, ``VDESK_ANTHROPIC_TOOL`` (``computer_toolset_20260801``, the
    default, or a single tool: ``computer_20251124``, ``computer_20250124``),
    ``VDESK_AGENT_TIMEOUT``."""

    base_url: str = "https://api.anthropic.com"
    api_key: str | None = None
    model: str = "claude-sonnet-4-5"
    tool: anthropic_adapter.Version = anthropic_adapter.TOOLSET
    max_tokens: int = Field(default=2048, ge=1)

    @classmethod
    def from_env(cls) -> AnthropicSettings:
        return cls.read({"base_url": _env("ANTHROPIC_BASE_URL"), "api_key": _env("ANTHROPIC_API_KEY"),
                         "model": _env("VDESK_ANTHROPIC_MODEL"), "tool": _env("VDESK_ANTHROPIC_TOOL"),
                         "timeout": _env("VDESK_AGENT_TIMEOUT")})


class AnthropicAgent(Agent):
    """A model with Anthropic's computer toolset or tool: each ``tool_use`` block becomes actions,
    and is answered with the next screenshot. A reply without a tool call ends the episode."""

    name = "anthropic"

    def __init__(self, settings: AnthropicSettings) -> None:
        self.settings = settings
        self._messages: list[dict[str, Any]] = []
        self._pending: list[tuple[str, tuple[int, int, int, int] | None]] = []  # tool_use ids (and zoom regions) to answer
        self._image = ImageSpace(1024, 768)
        self._instruction = ""

    @classmethod
    def from_env(cls) -> AnthropicAgent:
        return cls(AnthropicSettings.from_env())

    def image_space(self, screen: Screen) -> ImageSpace | None:
        self._image = anthropic_target(screen)  # the sizes the reference tool scales to
        return self._image

    def reset(self, task: Task) -> None:
        self._messages, self._pending, self._instruction = [], [], task.instruction

    def act(self, observation: Observation) -> AgentReply:
        self._messages.append({"role": "user", "content": self._user_content(observation)})
        answer = post_json(f"{self.settings.base_url.rstrip('/')}/v1/messages", self._request(), self._headers(),
                           self.settings.timeout)
        content = answer.get("content")
        if not isinstance(content, list):
            raise AgentError(f"a message without a content list: {json.dumps(answer)[:ERROR_BODY_LIMIT]}")
        self._messages.append({"role": "assistant", "content": content})
        calls = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]
        text = " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text").strip()
        return AgentReply(self._actions(calls), raw=json.dumps(content), thought=text or None)

    def _actions(self, calls: list[dict[str, Any]]) -> list[BaseAction]:
        actions, self._pending = [], []
        for call in calls:
            try:
                translated = anthropic_adapter.translate_tool_use(call, version=self.settings.tool)
            except InvalidAction as error:
                raise AgentError(f"the model's tool call could not be used: {error}") from None
            actions += translated.actions
            self._pending.append((str(call.get("id")), translated.region))
        if calls and not actions:
            actions = [BaseAction.of("screenshot")]  # it only asked to look: go on, do not end
        return actions

    def _user_content(self, observation: Observation) -> list[dict[str, Any]]:
        frame = observation.frame_base64()
        seen = [{"type": "text", "text": observation.text}] if observation.text else []  # the tree or the marks
        if not self._pending:
            return [{"type": "text", "text": self._instruction}, anthropic_adapter.image_block(frame), *seen]
        error = _failures(observation)
        content = [anthropic_adapter.ToolResult(error=error, base64_image=_zoomed(observation, region) if region else frame
                                                ).to_api(call_id) for call_id, region in self._pending]
        if observation.user_reply:
            content.append({"type": "text", "text": observation.user_reply})
        return content + seen

    def _request(self) -> dict[str, Any]:
        tool = anthropic_adapter.tool_definition(self._image, self.settings.tool)
        return anthropic_adapter.messages_request(self.settings.model, self.settings.max_tokens, tool, self._messages)

    def _headers(self) -> dict[str, str]:
        return anthropic_adapter.headers(self.settings.tool, self.settings.api_key)


def _zoomed(observation: Observation, region: tuple[int, int, int, int]) -> str:
    """A zoom's answer: ``region`` of the observed frame (its pixels are the model's)."""
    return base64.b64encode(encode(observation.frame.crop(region), "png")).decode()


# -- OpenAI computer use ----------------------------------------------------------------------
class OpenAISettings(_Settings):
    """``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``),
    ``VDESK_OPENAI_MODEL``, ``VDESK_AGENT_TIMEOUT``."""

    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    model: str = "computer-use-preview"

    @classmethod
    def from_env(cls) -> OpenAISettings:
        return cls.read({"base_url": _env("OPENAI_BASE_URL"), "api_key": _env("OPENAI_API_KEY"),
                         "model": _env("VDESK_OPENAI_MODEL"), "timeout": _env("VDESK_AGENT_TIMEOUT")})


class OpenAIComputerAgent(Agent):
    """An OpenAI computer-use model over the Responses API: each ``computer_call`` becomes
    actions and is answered with the next screenshot. A reply without one ends the episode."""

    name = "openai"

    def __init__(self, settings: OpenAISettings) -> None:
        self.settings = settings
        self._previous: str | None = None
        self._calls: list[dict[str, Any]] = []
        self._instruction = ""

    @classmethod
    def from_env(cls) -> OpenAIComputerAgent:
        return cls(OpenAISettings.from_env())

    def reset(self, task: Task) -> None:
        self._previous, self._calls, self._instruction = None, [], task.instruction

    def act(self, observation: Observation) -> AgentReply:
        answer = post_json(f"{self.settings.base_url.rstrip('/')}/responses", self._request(observation),
                           self._headers(), self.settings.timeout)
        output = answer.get("output")
        if not isinstance(output, list):
            raise AgentError(f"a response without an output list: {json.dumps(answer)[:ERROR_BODY_LIMIT]}")
        self._previous = answer.get("id")
        self._calls = [item for item in output if isinstance(item, dict) and item.get("type") == "computer_call"]
        text = " ".join(part.get("text", "") for item in output if isinstance(item, dict) and item.get("type") == "message"
                        for part in item.get("content", []) if isinstance(part, dict)).strip()
        return AgentReply(self._actions(), raw=json.dumps(output), thought=text or None)

    def _actions(self) -> list[BaseAction]:
        actions = []
        for call in self._calls:
            try:
                actions += openai_adapter.translate_call(call).actions
            except InvalidAction as error:
                raise AgentError(f"the model's computer_call could not be used: {error}") from None
        if self._calls and not actions:
            actions = [BaseAction.of("screenshot")]  # it only asked to look: go on, do not end
        return actions

    def _request(self, observation: Observation) -> dict[str, Any]:
        screenshot = data_url(observation)
        tool = openai_adapter.tool_definition(ImageSpace(observation.frame.width, observation.frame.height))
        seen = [{"role": "user", "content": observation.text}] if observation.text else []  # the tree or the marks
        if self._previous is None:
            return openai_adapter.responses_request(self.settings.model, tool,
                                                    [*openai_adapter.first_input(self._instruction, screenshot), *seen])
        answers = [openai_adapter.screenshot_output(call.get("call_id"), screenshot,
                                                    call.get("pending_safety_checks", []))
                   for call in self._calls]
        if observation.user_reply:
            answers.append({"role": "user", "content": observation.user_reply})
        return openai_adapter.responses_request(self.settings.model, tool, answers + seen, self._previous)

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
