"""Tests against a real desktop in a real container: the shared desktop and its event probe
come from tests/conftest.py, and every test here carries the `desktop` marker (set there)."""
