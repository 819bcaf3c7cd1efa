"""Teaching desktop-env 1.0.2 the provider name "vdesk": the two places that know provider
names, patched once, at import.

1. ``desktop_env.providers.create_vm_manager_and_provider`` is an if/elif over its own names
   (NotImplementedError otherwise). It is wrapped so that "vdesk" returns
   (:class:`VdeskVMManager`, :class:`VdeskProvider`) and every other name goes to the original.
   ``desktop_env.desktop_env`` imported the function by name, so its binding is replaced too.
2. ``DesktopEnv.__init__`` checks the name a second time against two literal sets, to decide
   whether a machine starts clean (docker, the clouds) or dirty (vmware, virtualbox), and raises
   ValueError for any other. A vdesk desktop starts clean, as docker's does, so the wrapped
   ``__init__`` passes the name "docker" through that check, with a context variable telling the
   factory (called inside, with that name) to build the vdesk pair and with the env's
   ``screen_size``; after it returns, ``env.provider_name`` is "vdesk" again. In 1.0.2 nothing
   else in ``__init__`` reads the name but ``client_password`` (not "aws": "password", the
   osworld desktop's password).

No other attribute or method of desktop-env changes; ``DesktopEnv(provider_name="docker")`` and
the rest behave as before. The cost that decided it: the alternative, a DesktopEnv subclass,
would make every OSWorld script change its class, not one argument.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from typing import Any

import desktop_env.desktop_env as desktop_env_module
import desktop_env.providers as providers_module
from desktop_env.desktop_env import DesktopEnv

from vdesk_osworld_provider.provider import VdeskProvider, VdeskVMManager

NAME = "vdesk"
CLEAN_START_NAME = "docker"   # a name DesktopEnv.__init__ takes as "starts from a clean state"
_MARK = "__vdesk_provider__"  # set on the wrappers, so importing twice wraps once

# The screen size of the DesktopEnv being built, while its __init__ runs (None: not building one).
_building: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("vdesk_building", default=None)


def register() -> None:
    """Patch desktop-env so ``DesktopEnv(provider_name="vdesk")`` works. Idempotent."""
    factory = providers_module.create_vm_manager_and_provider
    if not getattr(factory, _MARK, False):
        wrapped = _wrap_factory(factory)
        providers_module.create_vm_manager_and_provider = wrapped
        desktop_env_module.create_vm_manager_and_provider = wrapped
    if not getattr(DesktopEnv.__init__, _MARK, False):
        DesktopEnv.__init__ = _wrap_init(DesktopEnv.__init__)  # type: ignore[method-assign]


def is_registered() -> bool:
    return bool(getattr(providers_module.create_vm_manager_and_provider, _MARK, False)
                and getattr(desktop_env_module.create_vm_manager_and_provider, _MARK, False)
                and getattr(DesktopEnv.__init__, _MARK, False))


def _wrap_factory(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_vm_manager_and_provider(provider_name: str, region: str | None = None, use_proxy: bool = False) -> Any:
        building = _building.get()
        if building is not None or provider_name.lower().strip() == NAME:
            return VdeskVMManager(), VdeskProvider(region, screen_size=building)
        return original(provider_name, region, use_proxy)

    setattr(create_vm_manager_and_provider, _MARK, True)
    return create_vm_manager_and_provider


def _wrap_init(original: Callable[..., None]) -> Callable[..., None]:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self: DesktopEnv, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if str(bound.arguments["provider_name"]).lower().strip() != NAME:
            original(*bound.args, **bound.kwargs)
            return
        size = bound.arguments["screen_size"]
        bound.arguments["provider_name"] = CLEAN_START_NAME
        token = _building.set((int(size[0]), int(size[1])))
        try:
            original(*bound.args, **bound.kwargs)
        finally:
            _building.reset(token)
        self.provider_name = NAME

    setattr(__init__, _MARK, True)
    return __init__
