"""The desktop image: building it, with a locally made base when no registry answers.

``vdesk/desktop:<version>`` is built from ``docker/`` FROM ``debian:bookworm-slim``. When that
base is neither present nor pullable (no registry, air-gapped), a minimal Debian is made with
``debootstrap --variant=minbase`` and imported as ``vdesk/base:bookworm``. Every step is kept,
so a second build reuses what the first made. Images carry a hash of their build context;
a stale image (the context changed) is rebuilt.
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
from vdesk.errors import ImageError

IMAGE_REPOSITORY = "vdesk/desktop"
IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
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


def context_hash() -> str:
    digest = hashlib.sha256()
    folder = context_dir()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def is_current(client: docker.DockerClient, image: str = IMAGE) -> bool:
    """True when ``image`` exists and was built from the present context."""
    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return (found.labels or {}).get(CONTEXT_LABEL) == context_hash()


def ensure(client: docker.DockerClient, image: str = IMAGE, progress: Progress = print,
           source: docker.DockerClient | None = None) -> str:
    """Return ``image``; vdesk's own image is made first if it is missing or stale: copied
    from ``source`` (another engine that has it current), or else built."""
    if image != IMAGE:
        if not _exists(client, image):
            raise ImageError(f"image {image!r} not found; build it, or use vdesk's own ({IMAGE})")
        return image
    if not is_current(client):
        if source is not None and is_current(source):
            copy(source, client, progress)
        else:
            build(client, progress=progress)
    return IMAGE


def copy(source: docker.DockerClient, target: docker.DockerClient, progress: Progress = print) -> None:
    """Stream vdesk's image from one engine to another (``docker save | docker load``)."""
    progress(f"copying {IMAGE} to the target engine ...")
    try:
        target.api.load_image(source.api.get_image(IMAGE))
        target.images.get(IMAGE).tag(IMAGE_REPOSITORY, "latest")
    except docker.errors.APIError as error:
        raise ImageError(f"copying {IMAGE} between engines failed: {error.explanation}") from None


def build(client: docker.DockerClient, progress: Progress = print, base: str | None = None) -> str:
    """Build ``vdesk/desktop:<version>`` (and ``:latest``); return its tag."""
    base = base or resolve_base(client, progress)
    progress(f"building {IMAGE} from {base} ...")
    labels = {CONTEXT_LABEL: context_hash(), "vdesk.image": __version__}
    try:
        stream = client.api.build(path=str(context_dir()), tag=IMAGE, buildargs={"BASE": base},
                                  labels=labels, rm=True, forcerm=True, decode=True, pull=False)
        for chunk in stream:
            if "error" in chunk:
                raise ImageError(f"building {IMAGE} failed: {chunk['error'].strip()}")
            line = chunk.get("stream", "").strip()
            if line.startswith("Step "):
                progress(line)
    except docker.errors.APIError as error:
        raise ImageError(f"building {IMAGE} failed: {error.explanation}") from None
    client.images.get(IMAGE).tag(IMAGE_REPOSITORY, "latest")
    progress(f"built {IMAGE}")
    return IMAGE


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
