"""A model behind an OpenAI-compatible ``/chat/completions`` that speaks one of OSWorld's action
spaces: pyautogui code (parsed, never run) or computer_13 action JSON, with DONE / FAIL / WAIT.

    VDESK_CHAT_BASE_URL=http://127.0.0.1:8000/v1 vdesk eval SUITE --agent osworld-chat --action-space pyautogui

The prompt says what the reference's agents are told: the screen, the action space, the
special actions and the machine's password; the last ``history`` screenshots ride along.
"""

from __future__ import annotations

from typing import Any

from vdesk.adapters import computer13, pyautogui
from vdesk.errors import AgentError, InvalidAction, InvalidArgument
from vdesk.harness.agents.base import AgentReply
from vdesk.harness.agents.models import ChatSettings, OpenAIChatAgent
from vdesk.harness.env import Observation

SPACES = ("pyautogui", "computer_13")
_SPACE_RULES = {
    "pyautogui": ("Reply with Python code that uses only pyautogui (click, doubleClick, moveTo, dragTo, scroll, "
                  "write, press, hotkey, keyDown, keyUp) and time.sleep, with literal arguments, in one ```python "
                  "block. Coordinates are pixels of the screenshot."),
    "computer_13": ("Reply with one JSON action or a list of them, each {\"action_type\": ..., \"parameters\": {...}}: "
                    "MOVE_TO, CLICK, MOUSE_DOWN, MOUSE_UP, RIGHT_CLICK, DOUBLE_CLICK, DRAG_TO, SCROLL, TYPING, PRESS, "
                    "KEY_DOWN, KEY_UP, HOTKEY. Coordinates are pixels of the screenshot."),
}
PASSWORD = "password"


class OSWorldChatAgent(OpenAIChatAgent):
    """OSWorld's prompt and action space over a chat endpoint (settings and turns as ``openai-chat``)."""

    name = "osworld-chat"

    def __init__(self, settings: ChatSettings, action_space: str = "pyautogui") -> None:
        if action_space not in SPACES:
            raise InvalidArgument(f"action space must be one of {', '.join(SPACES)}, got {action_space!r}")
        super().__init__(settings)
        self.action_space = action_space

    @classmethod
    def from_env(cls, action_space: str = "pyautogui") -> OSWorldChatAgent:  # type: ignore[override]
        return cls(ChatSettings.from_env(), action_space)

    def _reply(self, text: str, observation: Observation) -> AgentReply:
        try:
            parsed = (pyautogui.parse(text, tags=observation.tags) if self.action_space == "pyautogui"
                      else computer13.parse(text))
        except InvalidAction as error:
            raise AgentError(f"the model's reply could not be parsed as {self.action_space}: {error}") from None
        return AgentReply(parsed.actions, raw=text)

    def system_prompt(self, observation: Observation) -> str:
        width, height = observation.frame.width, observation.frame.height
        return (f"You are an agent that operates a Linux desktop ({width}x{height} screenshots) to do a task. "
                f"{_SPACE_RULES[self.action_space]} When the task is done reply DONE; when it cannot be done "
                f"reply FAIL; to wait reply WAIT. My computer's password is '{PASSWORD}'.")

    def _request(self, observation: Observation) -> dict[str, Any]:
        task = f"Task: {self._instruction}"
        if observation.text:  # the tree or the marks (DesktopEnv's observation mode)
            task = f"{task}\n\n{observation.text}"
        if observation.mark_centres and self.action_space == "pyautogui":
            task += "\n\nThe variables tag_1, tag_2, … hold the centres of the numbered elements: pyautogui.click(tag_2)."
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt(observation)},
                                          {"role": "user", "content": task}]
        for screenshot, reply in self._turns[-self.settings.history:]:
            messages.append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": screenshot}}]})
            if reply is not None:
                messages.append({"role": "assistant", "content": reply})
        return {"model": self.settings.model, "messages": messages, "max_tokens": self.settings.max_tokens}
