"""vdesk desktops for OSWorld's own harness (desktop-env 1.0.2): one import, one argument.

    import vdesk_osworld_provider  # registers the provider name "vdesk"
    from desktop_env.desktop_env import DesktopEnv

    env = DesktopEnv(provider_name="vdesk", action_space="pyautogui", screen_size=(1920, 1080))
    obs = env.reset(task_config=task)      # a fresh osworld desktop, the task's setup steps
    obs, reward, done, info = env.step("pyautogui.click(100, 200)")
    score = env.evaluate()                 # OSWorld's own getters and metrics
    env.close()                            # the desktop is removed

Each DesktopEnv runs ``vdesk osworld-serve`` from vdesk's virtualenv (``$VDESK_BIN``, else
``vdesk`` on PATH), a vdesk desktop with OSWorld's machine server in front of it, and
desktop-env's own controllers talk to that server as they talk to OSWorld's VM.
``path_to_vm`` names the vdesk image (default ``osworld``, GNOME). Importing this package patches the
two places in desktop-env that know provider names (see :mod:`.registry`).
"""

from __future__ import annotations

from vdesk_osworld_provider.provider import DEFAULT_IMAGE, VdeskProvider, VdeskVMManager
from vdesk_osworld_provider.registry import NAME, is_registered, register
from vdesk_osworld_provider.served import VDESK_BIN, Endpoint, ServedDesktop, VdeskServeError

register()

__all__ = ["DEFAULT_IMAGE", "NAME", "VDESK_BIN", "Endpoint", "ServedDesktop", "VdeskProvider", "VdeskServeError",
           "VdeskVMManager", "is_registered", "register"]
