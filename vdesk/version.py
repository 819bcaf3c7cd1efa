"""The version of vdesk: the package, its image tag and its records."""

__version__ = "0.2.0"
