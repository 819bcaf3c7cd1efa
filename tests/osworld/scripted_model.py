"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1 for OSWorld's own agents: each task
(known by the instruction OSWorld's prompt carries) gets its fixed replies in order, then
"DONE", whichever environment asks and in whatever order the tasks run."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.json_http import LoopbackServer, QuietHandler, answer

TASK_MARK = "You are asked to complete the following task: "   # how PromptAgent's system prompt ends
BODY_LIMIT = 64 * 1024 * 1024                                    # a request carries screenshots


@dataclass
class Asked:
    """One request, as the test checks it."""

    instruction: str
    authorization: str
    model: str
    images: int            # image parts in the last user message (the observation)
    reply: str


def reply_for(step: str) -> str:
    """A step as a model in the pyautogui space answers it: code in a fence, or a bare word."""
    return step if step in ("WAIT", "DONE", "FAIL") else f"```python\n{step}\n```"


@dataclass
class ScriptedChatServer:
    """``scripts``: instruction -> replies. A request for an unknown instruction is a 400."""

    scripts: dict[str, list[str]]
    asked: list[Asked] = field(default_factory=list)

    def __post_init__(self) -> None:
        server, lock = self, threading.Lock()
        queues = {instruction: list(replies) for instruction, replies in self.scripts.items()}

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                length = int(self.headers.get("content-length", "0"))
                if self.path != "/v1/chat/completions" or not 0 < length <= BODY_LIMIT:
                    return answer(self, 404 if length else 400, {"error": {"code": "bad_request", "message": self.path}})
                body = json.loads(self.rfile.read(length))
                instruction = _instruction(body)
                if instruction not in queues:
                    return answer(self, 400, {"error": {"code": "unknown_task", "message": instruction[:200]}})
                with lock:
                    text = queues[instruction].pop(0) if queues[instruction] else "DONE"
                    server.asked.append(Asked(instruction, self.headers.get("authorization", ""), body.get("model", ""),
                                              _images(body), text))
                answer(self, 200, {"id": "scripted", "object": "chat.completion", "model": body.get("model"),
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": text}}]})

        self._http = LoopbackServer(Handler)
        self.url = self._http.url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ScriptedChatServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _instruction(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    text = system if isinstance(system, str) else "".join(part.get("text", "") for part in system)
    return text.rsplit(TASK_MARK, 1)[-1].strip()


def _images(body: dict[str, Any]) -> int:
    last = body["messages"][-1]["content"]
    return sum(1 for part in last if isinstance(part, dict) and part.get("type") == "image_url") if isinstance(last, list) else 0
