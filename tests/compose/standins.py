"""Stand-in images for the upstream ones the published files name (``postgres:16``,
``python:3.11-slim``), built from Debian's packages: the test machines reach only Debian's and
PyPI's registries, never Docker Hub.

A Debian bookworm base comes from ``debootstrap --variant=minbase`` on the machine's own Debian
mirror and ``docker import``; each stand-in is built FROM it (tests/compose/standins/<name>/).
Every image carries the hash of its recipe in a label and is rebuilt only when the recipe
changed, so warm runs cost nothing here. An image under the upstream name that has no such
label is the real one: it is left alone and used.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.compose.engine import docker

RECIPES = Path(__file__).resolve().parent / "standins"
LABEL = "org.loomsync.standin.recipe"
SUITE = "bookworm"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class StandIn:
    """An upstream image name and the recipe folder (under standins/) that stands in for it."""

    tag: str
    recipe: str


STANDINS = (StandIn("postgres:16", "postgres"), StandIn("python:3.11-slim", "python"))


def debian_mirror(apt_dir: Path = Path("/etc/apt")) -> str:
    """The machine's Debian archive URL (the ``URIs:`` of a deb822 ``.sources`` file or the
    URL of a ``deb`` line in sources.list that ends in ``/debian``), else deb.debian.org."""
    pattern = re.compile(r"^(?:URIs:|deb(?:\s+\[[^]]*\])?)\s+(\S+/debian)/?(?:\s|$)", re.MULTILINE)
    files = [*sorted((apt_dir / "sources.list.d").glob("*.sources")), apt_dir / "sources.list"]
    for file in files:
        if file.is_file():
            match = pattern.search(file.read_text(errors="replace"))
            if match:
                return match.group(1)
    return DEFAULT_MIRROR


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    return hasher.hexdigest()[:16]


def _recipe_bytes(folder: Path) -> list[bytes]:
    return [
        path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]


def _label(tag: str) -> str | None:
    """The recipe label of image ``tag``: None when there is no such image, "" when it has no
    label (an upstream image)."""
    done = docker(
        "image", "inspect", "--format", f'{{{{index .Config.Labels "{LABEL}"}}}}', tag, check=False
    )
    if done.returncode != 0:
        return None
    value = done.stdout.decode().strip()
    return "" if value == "<no value>" else value


def ensure_base(mirror: str) -> str:
    """The tag of the debootstrapped Debian base image, built when missing (about 35-90 s)."""
    recipe = _digest(b"debootstrap --variant=minbase", SUITE.encode(), mirror.encode())
    tag = f"loomsync-standin-debian:{SUITE}-{recipe}"
    if _label(tag) == recipe:
        return tag
    with tempfile.TemporaryDirectory(prefix="loomsync-debootstrap-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        subprocess.run(
            ["debootstrap", "--variant=minbase", SUITE, str(rootfs), mirror],
            check=True,
            capture_output=True,
        )
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        imported = subprocess.run(
            ["docker", "import", "--change", f"LABEL {LABEL}={recipe}", "-", tag],
            stdin=tar.stdout,
            capture_output=True,
            check=False,
        )
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise RuntimeError(f"docker import of the Debian base failed: {imported.stderr!r}")
    return tag


def ensure_standin(standin: StandIn, base: str) -> bool:
    """Build ``standin`` FROM ``base`` under its upstream tag unless that tag already holds
    this recipe or is an upstream image. True when it built."""
    folder = RECIPES / standin.recipe
    ca = CA_BUNDLE.read_bytes() if standin.recipe == "python" else b""
    recipe = _digest(base.encode(), ca, *_recipe_bytes(folder))
    if _label(standin.tag) in (recipe, ""):
        return False
    with tempfile.TemporaryDirectory(prefix="loomsync-standin-") as tmp:
        context = Path(tmp) / "context"
        shutil.copytree(folder, context)
        if ca:
            (context / "ca.crt").write_bytes(ca)
        docker(
            "build",
            "--quiet",
            "--build-arg",
            f"BASE={base}",
            "--label",
            f"{LABEL}={recipe}",
            "--tag",
            standin.tag,
            str(context),
        )
    return True


def ensure_standins() -> dict[str, float]:
    """Every stand-in image present and current; the seconds each step took, by name (the
    base's key is ``debian-base``), 0.0 for a step that found its image cached."""
    seconds: dict[str, float] = {}
    start = time.monotonic()
    base = ensure_base(debian_mirror())
    seconds["debian-base"] = time.monotonic() - start
    for standin in STANDINS:
        start = time.monotonic()
        built = ensure_standin(standin, base)
        seconds[standin.tag] = time.monotonic() - start if built else 0.0
    return seconds
