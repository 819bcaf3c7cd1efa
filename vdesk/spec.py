"""What a desktop is started as: one :class:`DesktopSpec` (size, scale, image, network,
time-to-live, limits, environment, clock), the same object for :meth:`vdesk.Desktop.up`, a
task file's ``desktop:``, the MCP server and a desktop on the cluster.

It is checked when made: a bad value raises :class:`~vdesk.errors.InvalidArgument` naming it
(inside a task file, a validation error there), before any container starts. It is frozen
and plain data, so it crosses to a cluster node as it is. How one desktop is run (its name,
engine, lease, the wait for it) is not part of it: those belong to the one call that starts it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from numbers import Integral, Real
from typing import Any, Literal, get_args

import docker.errors
from docker.utils import parse_bytes
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, field_validator, model_validator

from vdesk import images
from vdesk.clock import parse_clock
from vdesk.coords import Screen
from vdesk.errors import InvalidArgument

DEFAULT_SIZE = (1280, 800)
MAX_SIZE = (7680, 4320)
MAX_TTL = 10**9

Network = Literal["none", "bridge"]
"""A desktop's network: ``none`` (the default: no network at all) or Docker's ``bridge``."""
NETWORKS: tuple[str, ...] = get_args(Network)


@dataclass(frozen=True)
class Limits:
    """Resource limits of a desktop's container: memory and shared memory as Docker writes
    sizes (``"2g"``, ``"256m"``), CPUs (may be fractional), processes."""

    memory: str = "2g"
    cpus: float = 2.0
    pids: int = 512
    shm: str = "256m"

    def __post_init__(self) -> None:
        for name in ("memory", "shm"):
            value = getattr(self, name)
            try:
                valid = isinstance(value, (str, int)) and not isinstance(value, bool) and parse_bytes(value) > 0
            except docker.errors.DockerException:
                valid = False
            if not valid:
                raise InvalidArgument(f"limits.{name} must be a size such as '2g' or '256m', got {value!r}")
        if isinstance(self.cpus, bool) or not isinstance(self.cpus, Real) or not 0 < self.cpus <= 1024:
            raise InvalidArgument(f"limits.cpus must be a positive number of CPUs, got {self.cpus!r}")
        if isinstance(self.pids, bool) or not isinstance(self.pids, Integral) or self.pids < 1:
            raise InvalidArgument(f"limits.pids must be a whole number of processes, at least 1, got {self.pids!r}")


class DesktopSpec(BaseModel):
    """One desktop's settings. ``image`` None is the default image (:data:`vdesk.images.DEFAULT`,
    the lean one) for :meth:`~vdesk.Desktop.up`, and the run's image for a task.

    ``size`` is logical pixels (``(1280, 800)``, or ``"1280x800"`` in a file); ``ttl``
    seconds, None or 0 for none; ``clock`` the time every program in the desktop sees at the
    start (``"2026-01-01 00:00:00"``, UTC; see :mod:`vdesk.clock`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    size: tuple[int, int] = DEFAULT_SIZE
    scale: float = 1.0
    image: str | None = None
    network: Network = "none"
    ttl: float | None = None
    limits: Limits = Limits()
    environment: dict[str, str] = Field(default_factory=dict)
    clock: str | None = None

    def __init__(self, **settings: Any) -> None:
        # Made in code, a bad value is the caller's usage error, said in one line; read from a
        # file (model_validate, or inside a task) it stays a validation error that names its place.
        try:
            super().__init__(**settings)
        except ValidationError as error:
            raise InvalidArgument(_first_problem(error)) from None

    # Pydantic calls an overridden __init__ for a nested model too, which would turn a task
    # file's error into this one-line form and lose its place; marked as its own, it does not.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]  # pydantic's marker, read when the class is made

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        # Whole numbers only: pydantic would take ("1280", "800") and (1280.0, 800) as well.
        return parse_size(value) if isinstance(value, str) else screen_of(value).size

    @field_validator("scale", "ttl", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        # Pydantic would read True as 1 and "2" as 2: a flag or a string here is a mistake.
        if value is not None and (isinstance(value, bool) or not isinstance(value, Real)):
            raise ValueError(f"must be a number, got {value!r}")
        return value

    @field_validator("ttl")
    @classmethod
    def _ttl(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= MAX_TTL:  # also refuses nan and inf
            raise ValueError(f"ttl must be 0 (none) or a number of seconds up to 1e9, got {value}")
        return value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        if value is not None:
            images.resolve(value)
        return value

    @field_validator("clock", mode="before")
    @classmethod
    def _clock(cls, value: Any) -> Any:
        if value is None:
            return None
        moment = parse_clock(value)
        return value if isinstance(value, str) else moment.strftime("%Y-%m-%d %H:%M:%S")

    @model_validator(mode="after")
    def _screen(self) -> DesktopSpec:
        screen_of(self.size, self.scale)
        return self

    @field_serializer("size")
    def _size_text(self, size: tuple[int, int]) -> str:
        return f"{size[0]}x{size[1]}"  # as a task file writes it

    @property
    def screen(self) -> Screen:
        """The screen a desktop of this spec has."""
        return Screen(*self.size, self.scale)

    @property
    def image_name(self) -> str:
        """The image's name, the default one when none is given."""
        return self.image or images.DEFAULT

    def start_time(self) -> datetime | None:
        """The desktop's clock at the start, None for the real time."""
        return parse_clock(self.clock) if self.clock is not None else None

    def over(self, image: str | None = None, environment: dict[str, str] | None = None) -> DesktopSpec:
        """This spec on a run's defaults: ``image`` where it names none, ``environment`` under its own."""
        return self.model_copy(update={"image": self.image or image,
                                       "environment": {**(environment or {}), **self.environment}})


def _first_problem(error: ValidationError) -> str:
    """The first problem of ``error`` in one line, named by its setting."""
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem["loc"])
    cause = (problem.get("ctx") or {}).get("error")
    if problem["type"] == "extra_forbidden":
        return f"unknown desktop setting {where!r} (known: {', '.join(DesktopSpec.model_fields)})"
    if isinstance(cause, InvalidArgument) or (cause is not None and str(cause).startswith(where)):
        return str(cause)
    said = str(cause) if cause is not None else problem["msg"]
    return f"{where}: {said}" if cause is not None else f"{where}: {said}, got {problem['input']!r}"


def screen_of(size: Any, scale: Any = 1.0) -> Screen:
    """The screen of a desktop of logical ``size`` (width, height) at HiDPI ``scale``."""
    if not (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(v, Integral) and not isinstance(v, bool) for v in size)):
        raise InvalidArgument(f"size must be a pair of whole numbers (width, height), got {size!r}")
    width, height = int(size[0]), int(size[1])
    max_width, max_height = MAX_SIZE
    if not (64 <= width <= max_width and 64 <= height <= max_height):
        raise InvalidArgument(f"size {width}x{height} is outside 64x64..{max_width}x{max_height}")
    if isinstance(scale, bool) or not isinstance(scale, Real) or not math.isfinite(scale):
        raise InvalidArgument(f"scale must be a number between 0.5 and 4, got {scale!r}")
    screen = Screen(width, height, float(scale))  # refuses a scale outside 0.5..4
    physical_width, physical_height = screen.physical_size
    if physical_width > max_width or physical_height > max_height:
        raise InvalidArgument(f"size {width}x{height} at scale {scale:g} exceeds {max_width}x{max_height} pixels")
    return screen


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x800"`` → ``(1280, 800)``; raises :class:`InvalidArgument` naming the bad text."""
    match = re.fullmatch(r"([0-9]{1,6})[x×]([0-9]{1,6})", text.strip()) if isinstance(text, str) else None
    if not match:  # at most 6 digits: int() refuses more than 4300
        raise InvalidArgument(f"invalid size {text!r}: write WIDTHxHEIGHT, e.g. 1280x800")
    return int(match.group(1)), int(match.group(2))
