"""vdesk: disposable, sandboxed Linux desktops for GUI agents."""

__version__ = "0.2.0"
