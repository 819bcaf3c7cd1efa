"""The desktop images: building them, with a locally made base when no registry answers.

Two images, named by :func:`resolve` (``"lean"``, ``"apps"`` or any Docker image name):

- ``vdesk/desktop:<version>`` (lean, the default) is built from ``docker/`` FROM
  ``debian:bookworm-slim``. When that base is neither present nor pullable (no registry,
  air-gapped), a minimal Debian is made with ``debootstrap --variant=minbase`` and imported as
  ``vdesk/base:bookworm``.
- ``vdesk/desktop-apps:<version>`` is built from ``docker/apps/`` FROM the lean image: real
  programs (a browser, an office suite, ...), a session D-Bus, the accessibility bus, a taskbar.

Every step is kept, so a second build reuses what the first made. Each image carries a hash
of its own build context (the lean one's leaves out ``docker/apps/``; the apps one's includes
the lean hash, since it is built FROM it); a stale image (its context changed) is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors

from vdesk import __version__
from vdesk.errors import ImageError, InvalidArgument

IMAGE_REPOSITORY = "vdesk/desktop"
IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
APPS_REPOSITORY = "vdesk/desktop-apps"
APPS_IMAGE = f"{APPS_REPOSITORY}:{__version__}"
IMAGE_NAMES = {"lean": IMAGE, "apps": APPS_IMAGE}
APPS_FOLDER = "apps"
REGISTRY_BASE = "debian:bookworm-slim"
LOCAL_BASE = "vdesk/base:bookworm"
CONTEXT_LABEL = "vdesk.context-hash"
DEBIAN_MIRROR = os.environ.get("VDESK_DEBIAN_MIRROR", "http://deb.debian.org/debian")

Progress = Callable[[str], None]


def context_dir() -> Path:
    """The image's build context: shipped inside the wheel, or ``docker/`` in a checkout."""
    for candidate in (Path(__file__).parent / "_docker", Path(__file__).parent.parent / "docker"):
        if (candidate / "Dockerfile").is_file():
            return candidate
    raise ImageError("the desktop image's build context (Dockerfile) is missing from this installation")


def resolve(name: str) -> str:
    """The Docker image a name means: ``"lean"``, ``"apps"``, or a Docker image name as is."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"image must be 'lean', 'apps' or a Docker image name, got {name!r}")
    return IMAGE_NAMES.get(name, name)


def is_apps(image: str) -> bool:
    """True for the apps image, by name or by its Docker name."""
    return resolve(image) == APPS_IMAGE


def context_hash(image: str = IMAGE) -> str:
    """The hash of ``image``'s own build context (and, for the apps image, of the lean one's)."""
    digest = hashlib.sha256()
    folder = context_dir()
    if is_apps(image):
        digest.update(b"FROM " + context_hash(IMAGE).encode() + b"\0")
        folder = folder / APPS_FOLDER
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if not is_apps(image) and relative.parts[0] == APPS_FOLDER:
            continue  # the apps image's files do not make the lean one stale
        digest.update(relative.as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def is_current(client: docker.DockerClient, image: str = IMAGE) -> bool:
    """True when ``image`` exists and was built from the present context."""
    image = resolve(image)
    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return (found.labels or {}).get(CONTEXT_LABEL) == context_hash(image)


def ensure(client: docker.DockerClient, image: str = IMAGE, progress: Progress = print,
           source: docker.DockerClient | None = None) -> str:
    """Return the Docker name of ``image`` (see :func:`resolve`); vdesk's own images are made
    first if missing or stale: copied from ``source`` (another engine that has it current),
    or else built (the apps image after the lean one it is built FROM)."""
    image = resolve(image)
    if image not in IMAGE_NAMES.values():
        if not _exists(client, image):
            raise ImageError(f"image {image!r} not found; build it, or use vdesk's own ({IMAGE}, {APPS_IMAGE})")
        return image
    if is_current(client, image):
        return image
    if source is not None and is_current(source, image):
        copy(source, client, progress, image)
        return image
    if is_apps(image):
        ensure(client, IMAGE, progress, source)
        return build_apps(client, progress)
    return build(client, progress=progress)


def copy(source: docker.DockerClient, target: docker.DockerClient, progress: Progress = print,
         image: str = IMAGE) -> None:
    """Stream one of vdesk's images from one engine to another (``docker save | docker load``)."""
    progress(f"copying {image} to the target engine ...")
    try:
        target.api.load_image(source.api.get_image(image))
        target.images.get(image).tag(image.split(":")[0], "latest")
    except docker.errors.APIError as error:
        raise ImageError(f"copying {image} between engines failed: {error.explanation}") from None


def build(client: docker.DockerClient, progress: Progress = print, base: str | None = None) -> str:
    """Build ``vdesk/desktop:<version>`` (and ``:latest``); return its tag."""
    base = base or resolve_base(client, progress)
    return _build(client, IMAGE, context_dir(), base, progress)


def build_apps(client: docker.DockerClient, progress: Progress = print) -> str:
    """Build ``vdesk/desktop-apps:<version>`` (and ``:latest``) FROM the lean image, which must
    be current (:func:`ensure` makes it so); return its tag."""
    if not is_current(client, IMAGE):
        raise ImageError(f"{APPS_IMAGE} is built FROM {IMAGE}, which is missing or stale: build it first")
    return _build(client, APPS_IMAGE, context_dir() / APPS_FOLDER, IMAGE, progress)


def _build(client: docker.DockerClient, image: str, context: Path, base: str, progress: Progress) -> str:
    progress(f"building {image} from {base} ...")
    labels = {CONTEXT_LABEL: context_hash(image), "vdesk.image": __version__}
    try:
        stream = client.api.build(path=str(context), tag=image, buildargs={"BASE": base},
                                  labels=labels, rm=True, forcerm=True, decode=True, pull=False)
        for chunk in stream:
            if "error" in chunk:
                raise ImageError(f"building {image} failed: {chunk['error'].strip()}")
            line = chunk.get("stream", "").strip()
            if line.startswith("Step "):
                progress(line)
    except docker.errors.APIError as error:
        raise ImageError(f"building {image} failed: {error.explanation}") from None
    client.images.get(image).tag(image.split(":")[0], "latest")
    progress(f"built {image}")
    return image


def resolve_base(client: docker.DockerClient, progress: Progress = print) -> str:
    """The base to build FROM: the registry's Debian if present or pullable, else a local one."""
    for name in (REGISTRY_BASE, LOCAL_BASE):
        if _exists(client, name):
            return name
    try:
        progress(f"pulling {REGISTRY_BASE} ...")
        client.images.pull(REGISTRY_BASE)
        return REGISTRY_BASE
    except docker.errors.APIError as error:
        progress(f"cannot pull {REGISTRY_BASE} ({_first_line(error.explanation)}); making a local base")
    return make_local_base(client, progress)


def make_local_base(client: docker.DockerClient, progress: Progress = print) -> str:
    """``debootstrap --variant=minbase bookworm`` into a temporary folder, imported as an image."""
    debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not Path(debootstrap).exists():
        raise ImageError("no base image and no debootstrap: install it (apt-get install debootstrap) "
                         f"or load {REGISTRY_BASE} into the engine")
    if os.geteuid() != 0:
        raise ImageError(f"debootstrap must run as root to make {LOCAL_BASE}; "
                         f"run `vdesk build` as root once, or load {REGISTRY_BASE}")
    with tempfile.TemporaryDirectory(prefix="vdesk-base-") as folder:
        root = Path(folder) / "root"
        progress(f"debootstrap --variant=minbase bookworm from {DEBIAN_MIRROR} (about a minute) ...")
        _run_debootstrap([debootstrap, "--variant=minbase", "bookworm", str(root), DEBIAN_MIRROR], progress)
        for leftover in (root / "var/cache/apt/archives").glob("*.deb"):
            leftover.unlink()
        progress(f"importing the root filesystem as {LOCAL_BASE} ...")
        _import_rootfs(client, root)
    return LOCAL_BASE


def _run_debootstrap(argv: list[str], progress: Progress) -> None:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        tail = (tail + [line.rstrip()])[-20:]
        if line.startswith("I: ") and any(w in line for w in ("Retrieving Release", "Unpacking the base", "Configuring", "Base system installed")):
            progress(line[3:].strip())
    if process.wait() != 0:
        raise ImageError("debootstrap failed:\n" + "\n".join(tail))


def _import_rootfs(client: docker.DockerClient, root: Path) -> None:
    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(root, arcname=".")
        archive.seek(0)
        repository, tag = LOCAL_BASE.split(":")
        client.api.import_image_from_data(archive, repository=repository, tag=tag)


def _exists(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False


def _first_line(text: object) -> str:
    return str(text).splitlines()[0] if text else "no answer"
