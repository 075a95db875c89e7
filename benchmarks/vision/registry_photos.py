"""Real photographs from the package registry: the source distributions listed in
`registry_photos.json` ship test photos. Those whose `role` is `held-out` are the second real set
(plates of Argentina, the Czech Republic and Vietnam, the cars' body colours, two specimen
passports, portraits of two people), used only to report; those whose `role` is `tuning` are
real cars distinct from them, on which a threshold may be chosen (issue 37: `HUE_EVIDENCE`).
this downloads each sdist once (`pip download --no-binary :all: --no-deps`), extracts the listed
files into build/vision-data/registry/ (a photo with a `crop` box is that part of the member,
saved as PNG) and checks each member against its recorded sha256. `make
vision-data` runs it; nothing is fetched while the tests or the benchmark run. A photo already
there is not fetched again, and an sdist already beside the folder (the face_recognition one the
`vision-data` target fetches for the drawn set) is read where it lies.

    python -m benchmarks.vision.registry_photos [target-folder]
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LABELS = Path(__file__).with_name("registry_photos.json")
#: Where the photos are extracted: `INSPECTLANG_VISION_REGISTRY`, else build/vision-data/registry.
FOLDER = Path(
    os.environ.get("INSPECTLANG_VISION_REGISTRY", ROOT / "build" / "vision-data" / "registry")
)


#: The photos that only report (the second real set) and those a threshold may be chosen on.
HELD_OUT, TUNING = "held-out", "tuning"


def photos(kind: str | None = None, role: str | None = HELD_OUT) -> list[dict[str, Any]]:
    """The listed photos of `role` (held out unless told; None: every role), of `kind` when
    given."""
    listed = json.loads(LABELS.read_text())["photos"]
    return [
        photo
        for photo in listed
        if (kind is None or photo["kind"] == kind) and (role is None or photo["role"] == role)
    ]


def present(
    folder: Path = FOLDER, kind: str | None = None, role: str | None = HELD_OUT
) -> list[dict[str, Any]]:
    """The listed photos (of `kind` when given, of `role`) already extracted into `folder`."""
    return [photo for photo in photos(kind, role) if (folder / photo["file"]).is_file()]


def colored(folder: Path = FOLDER, role: str | None = HELD_OUT) -> list[dict[str, Any]]:
    """The present photos of `role` whose body colour is labelled (a plate photo's car, or a
    car's)."""
    return [photo for photo in present(folder, role=role) if "color" in photo["truth"]]


def _cropped(data: bytes, box: list[int]) -> bytes:
    """The part `box` (left, top, right, bottom) of a photo, as PNG."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    with Image.open(io.BytesIO(data)) as image:
        image.convert("RGB").crop(tuple(box)).save(buffer, "PNG")
    return buffer.getvalue()


def _archive(folder: Path, package: str) -> tuple[Path, bool]:
    """The package's sdist, and whether it was downloaded here (and so is removed after)."""
    name, _, version = package.partition("==")
    file = f"{name.replace('-', '_')}-{version}.tar.gz"
    for place in (folder, folder.parent):
        if (place / file).is_file():
            return place / file, False
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:"]
    subprocess.run([*command, "--no-deps", package, "-d", str(folder)], check=True)
    return folder / file, True


def fetch(folder: Path = FOLDER) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    by_package: dict[str, list[dict[str, Any]]] = {}
    for photo in photos(role=None):
        if not (folder / photo["file"]).is_file():
            by_package.setdefault(photo["package"], []).append(photo)
    # Each download is mostly pip preparing the sdist's metadata in a build environment of its
    # own (litealpr's: 76 s at load 15 on 2 cores): they run side by side.
    with ThreadPoolExecutor(max_workers=4) as pool:
        archives = dict(
            zip(by_package, pool.map(lambda p: _archive(folder, p), by_package), strict=True)
        )
    for package, wanted in by_package.items():
        archive, downloaded = archives[package]
        with tarfile.open(archive) as sdist:
            for photo in wanted:
                member = sdist.extractfile(photo["member"])
                if member is None:
                    raise SystemExit(f"{photo['member']} is not a file in {archive.name}")
                data = member.read()
                if hashlib.sha256(data).hexdigest() != photo["sha256"]:
                    raise SystemExit(f"{photo['member']} in {archive.name}: sha256 differs")
                if "crop" in photo:
                    data = _cropped(data, photo["crop"])
                (folder / photo["file"]).write_bytes(data)
        if downloaded:
            archive.unlink()


if __name__ == "__main__":
    fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER)
