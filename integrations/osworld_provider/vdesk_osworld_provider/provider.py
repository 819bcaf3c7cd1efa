"""desktop-env's Provider and VMManager for vdesk desktops.

A "VM" here is one vdesk desktop served by ``vdesk osworld-serve`` (:mod:`.served`);
``path_to_vm`` names the vdesk image it starts from (``osworld``, GNOME, unless given; any image
``vdesk up --image`` takes). There is no VM file to find, register or lock: every start is a new
container from the image, so the manager is bookkeeping-free, like the docker provider's.

``revert_to_snapshot`` gives a fresh desktop: it starts the next one first and removes the old
one while the next boots (desktop-env then calls ``start_emulator``, which adopts it), so a
``reset`` costs about one desktop start, not a removal plus a start. A desktop takes ~1 s to
remove and a few seconds to start; two exist at once only for that moment.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref

from desktop_env.providers.base import Provider, VMManager

from vdesk_osworld_provider.served import ServedDesktop, VdeskServeError

logger = logging.getLogger("desktopenv.providers.vdesk")

# What OSWorld's tasks assume of their machine, as its agents see it (vdesk build --osworld): the
# GNOME desktop, as vdesk's own task runs use.
DEFAULT_IMAGE = "osworld"
_LIVE: weakref.WeakSet[VdeskProvider] = weakref.WeakSet()


def default_screen_size() -> tuple[int, int]:
    """desktop-env's own default: SCREEN_WIDTH / SCREEN_HEIGHT, else 1920x1080."""
    return int(os.environ.get("SCREEN_WIDTH", 1920)), int(os.environ.get("SCREEN_HEIGHT", 1080))


class VdeskVMManager(VMManager):
    """Nothing to manage: a desktop is made per start from an image and removed at stop."""

    def initialize_registry(self, **kwargs: object) -> None:
        pass

    def add_vm(self, vm_path: str, **kwargs: object) -> None:
        pass

    def delete_vm(self, vm_path: str, region: str | None = None, **kwargs: object) -> None:
        pass

    def occupy_vm(self, vm_path: str, pid: int, region: str | None = None, **kwargs: object) -> None:
        pass

    def list_free_vms(self, **kwargs: object) -> list[str]:
        return [DEFAULT_IMAGE]

    def check_and_clean(self, **kwargs: object) -> None:
        pass

    def get_vm_path(self, os_type: str = "Ubuntu", region: str | None = None, screen_size: tuple[int, int] | None = None,
                    **kwargs: object) -> str:
        _check_os(os_type)
        return DEFAULT_IMAGE


class VdeskProvider(Provider):
    """One DesktopEnv's desktop at a time: started, reverted (a new one), stopped."""

    def __init__(self, region: str | None = None, screen_size: tuple[int, int] | None = None) -> None:
        super().__init__(region)
        self.screen_size = screen_size or default_screen_size()
        self._served: ServedDesktop | None = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    def start_emulator(self, path_to_vm: str, headless: bool, os_type: str = "Ubuntu") -> None:
        """Start a desktop from image ``path_to_vm`` (or adopt the one a revert started) and wait
        until its server answers. ``headless`` changes nothing: a vdesk desktop has no window
        here either way (watch it with ``vdesk view NAME``)."""
        _check_os(os_type)
        with self._lock:
            if self._served is None:
                self._served = ServedDesktop(path_to_vm or DEFAULT_IMAGE, self.screen_size)
            served = self._served
        served.ready()

    def get_ip_address(self, path_to_vm: str) -> str:
        with self._lock:
            served = self._served
        if served is None or served.endpoint is None:
            raise RuntimeError("vdesk desktop not started: call start_emulator first")
        return served.endpoint.address()

    @property
    def desktop_name(self) -> str | None:
        """The running desktop's vdesk name (``vdesk view NAME`` watches it), or None."""
        served = self._served
        return served.endpoint.name if served is not None and served.endpoint is not None else None

    def save_state(self, path_to_vm: str, snapshot_name: str) -> None:
        raise NotImplementedError("the vdesk provider keeps no snapshots: every reset starts a fresh desktop")

    def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> None:
        """A fresh desktop from the image (there is one snapshot: the image). The next desktop
        starts booting before the old one is removed; ``start_emulator`` waits for it."""
        with self._lock:
            old, self._served = self._served, ServedDesktop(path_to_vm or DEFAULT_IMAGE, self.screen_size)
        if old is not None:
            old.stop()
        return None  # the path does not change: desktop-env keeps its own

    def stop_emulator(self, path_to_vm: str, region: str | None = None, *args: object, **kwargs: object) -> None:
        """End the served desktop and wait until it is removed. Idempotent."""
        with self._lock:
            served, self._served = self._served, None
        if served is not None:
            served.stop()


def _check_os(os_type: str) -> None:
    if os_type != "Ubuntu":
        raise VdeskServeError(f"os_type={os_type!r}: vdesk desktops are Linux desktops set up as OSWorld's Ubuntu "
                              "machine; use os_type=\"Ubuntu\"")


@atexit.register
def _stop_all() -> None:
    """A script that never called ``env.close()`` still waits here for its desktops' removal
    (were it killed instead, the closed pipe would end them without waiting)."""
    for provider in list(_LIVE):
        try:
            provider.stop_emulator("")
        except Exception as error:  # noqa: BLE001 - at exit, report and go on to the next
            logger.error("stopping a vdesk desktop at exit: %s", error)
