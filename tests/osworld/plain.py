"""A getter's output as a JSON value, for comparing vdesk's with the reference's across processes:
tuples as lists, bytes as ``{"hex": …}``. No imports: the reference's child (``.venv-osworld``,
started in the repository) imports it too."""


def plain(value):  # type: ignore[no-untyped-def]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    return value
