"""The desktop images: building them, with a locally made base when no registry answers.

Four images, named by :func:`resolve` (``"lean"``, ``"apps"``, ``"osworld"``, ``"osworld-openbox"`` or
any Docker image name):

- ``vdesk/desktop:<version>`` (lean, the default) is built from ``docker/`` FROM
  ``debian:bookworm-slim``. When that base is neither present nor pullable (no registry,
  air-gapped), a minimal Debian is made with ``debootstrap --variant=minbase`` and imported as
  ``vdesk/base:bookworm``.
- ``vdesk/desktop-apps:<version>`` is built from ``docker/apps/`` FROM the lean image: real
  programs (a browser, an office suite, ...), a session D-Bus, the accessibility bus, a taskbar.
- ``vdesk/desktop-osworld-openbox:<version>`` is built from ``docker/osworld/`` FROM the apps
  image: what OSWorld's tasks assume (the user ``user``, ``python`` with pyautogui,
  ``google-chrome``, GNOME's gsettings schemas, VLC's HTTP interface, sudo), on the apps
  image's openbox and taskbar: for speed over fidelity.
- ``vdesk/desktop-osworld:<version>`` is built from ``docker/gnome/`` FROM that: the same
  machine as OSWorld's agents see it, GNOME Shell with Ubuntu's top bar, dock and look, where
  OSWorld's tasks run by default. The osworld desktops may gain privileges (see
  :mod:`vdesk.container`); no other image's may.

Every step is kept, so a second build reuses what the first made. Each image carries a hash
of its own build context (the lean one's leaves out the derived images' folders; each other
one's includes the hash of the image it is built FROM); a stale image is rebuilt.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import docker
import docker.errors

from vdesk.errors import ImageError, InvalidArgument, first_line
from vdesk.progress import Progress
from vdesk.version import __version__

IMAGE_REPOSITORY = "vdesk/desktop"
IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
APPS_REPOSITORY = "vdesk/desktop-apps"
APPS_IMAGE = f"{APPS_REPOSITORY}:{__version__}"
OSWORLD_REPOSITORY = "vdesk/desktop-osworld"
OSWORLD_IMAGE = f"{OSWORLD_REPOSITORY}:{__version__}"
OPENBOX_OSWORLD_REPOSITORY = "vdesk/desktop-osworld-openbox"
OPENBOX_OSWORLD_IMAGE = f"{OPENBOX_OSWORLD_REPOSITORY}:{__version__}"
DEFAULT = "lean"  # the image a desktop gets when none is named
# The apps image's taskbar clock (docker/apps/tint2rc), and so the openbox osworld image's: the
# right end of the bottom bar, width and height in logical pixels. It shows the minute now.
TASKBAR_CLOCK = (100, 30)
# The osworld image's clock: the middle of GNOME's top bar (27 px high), width and height.
TOP_BAR_CLOCK = (240, 27)
# Desktop.up's default wait for a start (start_timeout).
START_TIMEOUT = 30.0
GNOME_START_TIMEOUT = 120.0
IMAGE_NAMES = {DEFAULT: IMAGE, "apps": APPS_IMAGE, "osworld": OSWORLD_IMAGE, "osworld-openbox": OPENBOX_OSWORLD_IMAGE}
APPS_FOLDER = "apps"
OSWORLD_FOLDER = "osworld"
GNOME_FOLDER = "gnome"
# Each derived image: the folder of its build context and the image it is built FROM.
DERIVED = {APPS_IMAGE: (APPS_FOLDER, IMAGE), OPENBOX_OSWORLD_IMAGE: (OSWORLD_FOLDER, APPS_IMAGE),
           OSWORLD_IMAGE: (GNOME_FOLDER, OPENBOX_OSWORLD_IMAGE)}
REGISTRY_BASE = "debian:bookworm-slim"
LOCAL_BASE = "vdesk/base:bookworm"
CONTEXT_LABEL = "vdesk.context-hash"
WHEELS_LIST = "wheels.txt"  # in a build context: Python packages the host downloads for it
DOWNLOADS_LIST = "downloads.txt"  # in a build context: files the host downloads for it (URL SHA256)
WHEELS_TIMEOUT = 300.0
DEBIAN_MIRROR = os.environ.get("VDESK_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def context_dir() -> Path:
    """The image's build context: shipped inside the wheel, or ``docker/`` in a checkout."""
    for candidate in (Path(__file__).parent / "_docker", Path(__file__).parent.parent / "docker"):
        if (candidate / "Dockerfile").is_file():
            return candidate
    raise ImageError("the desktop image's build context (Dockerfile) is missing from this installation")


def resolve(name: str) -> str:
    """The Docker image a name means: ``"lean"``, ``"apps"``, ``"osworld"``, or a Docker image name as is."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"image must be 'lean', 'apps', 'osworld' or a Docker image name, got {name!r}")
    return IMAGE_NAMES.get(name, name)


def is_apps(image: str) -> bool:
    """True for the apps image and the osworld ones built FROM it, by name or by Docker name."""
    return resolve(image) in (APPS_IMAGE, OSWORLD_IMAGE, OPENBOX_OSWORLD_IMAGE)


def is_osworld(image: str) -> bool:
    """True for the osworld images, by name or by their Docker names: the one profile that may gain
    privileges (sudo)."""
    return resolve(image) in (OSWORLD_IMAGE, OPENBOX_OSWORLD_IMAGE)


def start_timeout(image: str) -> float:
    """How long ``Desktop.up`` waits for ``image``'s desktop by default: GNOME's session (the
    osworld image) takes 3 s to ready on a quiet machine, but over 30 s when four start at once on
    two cores; the others take 1-2 s."""
    return GNOME_START_TIMEOUT if resolve(image) == OSWORLD_IMAGE else START_TIMEOUT


def clock_box(image: str, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """Where ``image``'s desktops show the time on a screen of ``size`` (left, top, right,
    bottom), which turns with the minute; None for an image that shows none (the lean one)."""
    width, height = size
    if resolve(image) == OSWORLD_IMAGE:
        box_width, box_height = TOP_BAR_CLOCK
        return (width - box_width) // 2, 0, (width + box_width) // 2, box_height
    if is_apps(image):
        box_width, box_height = TASKBAR_CLOCK
        return width - box_width, height - box_height, width, height
    return None


def context_hash(image: str = IMAGE) -> str:
    """The hash of ``image``'s own build context (and of the image it is built FROM)."""
    image = resolve(image)
    digest = hashlib.sha256()
    folder = context_dir()
    if image in DERIVED:
        own_folder, parent = DERIVED[image]
        digest.update(b"FROM " + context_hash(parent).encode() + b"\0")
        folder = folder / own_folder
    derived_folders = {own for own, _ in DERIVED.values()}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if image not in DERIVED and relative.parts[0] in derived_folders:
            continue  # the derived images' files do not make the lean one stale
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


def _to_stderr(line: str) -> None:
    """Build progress goes to stderr: stdout belongs to the caller (`vdesk up --json` prints JSON there)."""
    print(line, file=sys.stderr, flush=True)


def ensure(client: docker.DockerClient, image: str = IMAGE, progress: Progress = _to_stderr,
           source: docker.DockerClient | None = None) -> str:
    """Return the Docker name of ``image`` (see :func:`resolve`); vdesk's own images are made
    first if missing or stale: copied from ``source`` (another engine that has it current),
    or else built (the apps image after the lean one it is built FROM)."""
    image = resolve(image)
    if image not in IMAGE_NAMES.values():
        if not _exists(client, image):
            raise ImageError(f"image {image!r} not found on the engine{_did_you_mean(image)}: name one of vdesk's own "
                             f"({', '.join(IMAGE_NAMES)}) or a Docker image the engine has (pull or build it first)")
        return image
    if is_current(client, image):
        return image
    if source is not None and is_current(source, image):
        copy(source, client, progress, image)
        return image
    if image in DERIVED:
        ensure(client, DERIVED[image][1], progress, source)
        return build_derived(client, image, progress)
    return build(client, progress=progress)


def _did_you_mean(name: str) -> str:
    """`` (did you mean 'apps'?)`` when ``name`` is a near miss of one of vdesk's own images."""
    close = difflib.get_close_matches(name, IMAGE_NAMES, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def copy(source: docker.DockerClient, target: docker.DockerClient, progress: Progress = _to_stderr,
         image: str = IMAGE) -> None:
    """Stream one of vdesk's images from one engine to another (``docker save | docker load``)."""
    progress(f"copying {image} to the target engine ...")
    try:
        target.api.load_image(source.api.get_image(image))
        target.images.get(image).tag(image.split(":")[0], "latest")
    except docker.errors.APIError as error:
        raise ImageError(f"copying {image} between engines failed: {error.explanation}") from None


def build(client: docker.DockerClient, progress: Progress = _to_stderr, base: str | None = None) -> str:
    """Build ``vdesk/desktop:<version>`` (and ``:latest``); return its tag."""
    base = base or resolve_base(client, progress)
    return _build(client, IMAGE, context_dir(), base, progress)


def build_apps(client: docker.DockerClient, progress: Progress = _to_stderr) -> str:
    """Build ``vdesk/desktop-apps:<version>`` (and ``:latest``) FROM the lean image, which must
    be current (:func:`ensure` makes it so); return its tag."""
    return build_derived(client, APPS_IMAGE, progress)


def build_derived(client: docker.DockerClient, image: str, progress: Progress = _to_stderr) -> str:
    """Build the apps or the osworld image (and its ``:latest``) FROM the image it derives
    from, which must be current (:func:`ensure` makes it so); return its tag."""
    folder, parent = DERIVED[image]
    if not is_current(client, parent):
        raise ImageError(f"{image} is built FROM {parent}, which is missing or stale: build it first")
    return _build(client, image, context_dir() / folder, parent, progress)


def _build(client: docker.DockerClient, image: str, context: Path, base: str, progress: Progress) -> str:
    if (context / WHEELS_LIST).is_file() or (context / DOWNLOADS_LIST).is_file():
        with tempfile.TemporaryDirectory(prefix="vdesk-context-") as copied:
            built = Path(copied) / context.name
            shutil.copytree(context, built)
            if (built / WHEELS_LIST).is_file():
                _download_wheels(built, progress)
            if (built / DOWNLOADS_LIST).is_file():
                _download_files(built, progress)
            return _build_context(client, image, built, base, progress)
    return _build_context(client, image, context, base, progress)


def _download_files(context: Path, progress: Progress) -> None:
    """Fill ``context/downloads/`` with the files its downloads.txt names (``URL SHA256`` a line),
    fetched by this host and each checked against its hash; a file kept from an earlier build
    (in the user's cache) is not fetched again."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vdesk" / "downloads"
    target = context / "downloads"
    target.mkdir(exist_ok=True)
    for url, sha256 in _download_list(context / DOWNLOADS_LIST):
        name = url.rsplit("/", 1)[-1]
        kept = cache / f"{sha256}-{name}"
        if not kept.is_file() or hashlib.sha256(kept.read_bytes()).hexdigest() != sha256:
            progress(f"downloading {url} ...")
            data = _fetch(url)
            if hashlib.sha256(data).hexdigest() != sha256:
                raise ImageError(f"downloading {url}: its SHA-256 is not the one {DOWNLOADS_LIST} names ({sha256})")
            cache.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(data)
        shutil.copyfile(kept, target / name)


def _download_list(path: Path) -> list[tuple[str, str]]:
    """The ``(URL, SHA256)`` lines of a downloads.txt (comments and blank lines skipped)."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or len(words[1]) != 64:
            raise ImageError(f"{path}:{number}: expected 'URL SHA256', got {line.strip()!r}")
        entries.append((words[0], words[1].lower()))
    return entries


def _fetch(url: str) -> bytes:
    import urllib.request  # only a build that downloads needs it

    try:
        with urllib.request.urlopen(url, timeout=WHEELS_TIMEOUT) as answer:
            return bytes(answer.read())
    except OSError as error:
        raise ImageError(f"downloading {url} failed: {error}") from None


def _download_wheels(context: Path, progress: Progress) -> None:
    """Fill ``context/wheels/`` with the pinned packages of its wheels.txt, fetched by this
    host (a build container reaches Debian's mirror but not PyPI)."""
    progress(f"downloading the Python packages of {context / WHEELS_LIST} ...")
    argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(context / "wheels"),
            "--requirement", str(context / WHEELS_LIST)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=WHEELS_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ImageError(f"downloading the packages of {WHEELS_LIST} took over {WHEELS_TIMEOUT:g} s") from None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]  # not pip's warnings
        raise ImageError(f"downloading the packages of {WHEELS_LIST} failed: {first_line(errors[-1] if errors else done.stderr)}")


def _build_context(client: docker.DockerClient, image: str, context: Path, base: str, progress: Progress) -> str:
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


def resolve_base(client: docker.DockerClient, progress: Progress = _to_stderr) -> str:
    """The base to build FROM: the registry's Debian if present or pullable, else a local one."""
    for name in (REGISTRY_BASE, LOCAL_BASE):
        if _exists(client, name):
            return name
    try:
        progress(f"pulling {REGISTRY_BASE} ...")
        client.images.pull(REGISTRY_BASE)
        return REGISTRY_BASE
    except docker.errors.APIError as error:
        progress(f"cannot pull {REGISTRY_BASE} ({first_line(error.explanation or 'no answer')}); making a local base")
    return make_local_base(client, progress)


def make_local_base(client: docker.DockerClient, progress: Progress = _to_stderr) -> str:
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
