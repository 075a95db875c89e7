"""`face_comparison` cases: a selfie against a photo of an identity card, same person or not.

The real photos are those of the `face_recognition==1.3.0` source distribution (five of one
person, two of them partial faces, and one of another) and scikit-image's astronaut: three
people. The selfie is one photo under a transformation (rotation, rescale, crop, brightness,
blur, JPEG quality); the document is another photo (the same one when the person has only one)
printed small on a card laid on a table and photographed. Everything is seeded.

The sdist comes from the registry (`pip download`) into `workdir` once, at benchmark time;
`make vision-data` does the same into build/vision-data/ for the tests.
"""

from __future__ import annotations

import io
import random
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

from benchmarks.vision.common import Case
from runtime.vision import AnalysisSubject

VALIDATORS = ("face_comparison",)

SDIST = "face_recognition-1.3.0.tar.gz"
#: The sdist's pip download arguments (the Makefile's `vision-data` target uses the same).
PIP_DOWNLOAD = ("--no-binary", ":all:", "--no-deps", "face_recognition==1.3.0")
SDIST_IMAGES = "face_recognition-1.3.0/tests/test_images/"

#: Each photo's person and its face box (left, top, right, bottom, in fractions of the photo),
#: found once with dlib's detector; the card prints the region around it.
PHOTOS: dict[str, tuple[str, tuple[float, float, float, float]]] = {
    "obama.jpg": ("obama", (0.402, 0.12, 0.686, 0.347)),
    "obama2.jpg": ("obama", (0.262, 0.252, 0.757, 0.509)),
    "obama3.jpg": ("obama", (0.45, 0.129, 0.666, 0.262)),
    "obama_partial_face.jpg": ("obama", (-0.11, 0.142, 0.377, 0.331)),
    "obama_partial_face2.jpg": ("obama", (0.682, 0.142, 1.073, 0.331)),
    "biden.jpg": ("biden", (0.453, 0.106, 0.772, 0.246)),
    "astronaut": ("astronaut", (0.35, 0.162, 0.52, 0.332)),
}
#: Photos printed on cards (a partial face is never an ID photo).
CARD_PHOTOS = ("obama.jpg", "obama3.jpg", "biden.jpg", "astronaut")


def sdist_path(workdir: Path) -> Path:
    """The face_recognition sdist in `workdir`, fetched from the package registry when absent."""
    path = workdir / SDIST
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", *PIP_DOWNLOAD, "-d", str(workdir)],
            check=True,
        )
    return path


def load_photos(workdir: Path) -> dict[str, Image.Image]:
    """The seven photos of `PHOTOS`, in RGB."""
    from skimage import data

    photos = {"astronaut": Image.fromarray(data.astronaut()).convert("RGB")}
    with tarfile.open(sdist_path(workdir)) as archive:
        for name in PHOTOS:
            if name != "astronaut":
                member = archive.extractfile(SDIST_IMAGES + name)
                assert member is not None
                photos[name] = Image.open(io.BytesIO(member.read())).convert("RGB")
    return photos


def jpeg(image: Image.Image, quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def face_box(name: str, image: Image.Image) -> tuple[int, int, int, int]:
    left, top, right, bottom = PHOTOS[name][1]
    return (
        round(left * image.width),
        round(top * image.height),
        round(right * image.width),
        round(bottom * image.height),
    )


def portrait(name: str, image: Image.Image) -> Image.Image:
    """The head-and-shoulders crop an ID card prints (3:4), around the face box."""
    left, top, right, bottom = face_box(name, image)
    size = right - left
    center_x, center_y = (left + right) / 2, (top + bottom) / 2 + 0.1 * size
    half_w, half_h = 0.95 * size, 1.27 * size
    box = (center_x - half_w, center_y - half_h, center_x + half_w, center_y + half_h)
    return image.crop(tuple(round(value) for value in box))


def card_photo(
    face: Image.Image | None,
    rng: random.Random,
    card_fraction: float,
    grey: bool,
    turn: int = 0,
) -> bytes:
    """A 1600x1200 photo of an ID card (the `face` printed on its left, or an empty frame)
    lying on a table, slightly rotated; `turn` (90 or -90) shoots it sideways (portrait)."""
    frame = Image.new("RGB", (1600, 1200), tuple(rng.randrange(60, 160) for _ in range(3)))
    table = ImageDraw.Draw(frame)
    for _ in range(60):  # wood-like streaks
        y = rng.randrange(1200)
        shade = tuple(rng.randrange(50, 170) for _ in range(3))
        table.line(
            [(0, y), (1600, y + rng.randrange(-40, 40))], fill=shade, width=rng.randrange(2, 9)
        )
    card_w = round(1600 * card_fraction)
    card_h = round(card_w * 54 / 85.6)
    card = Image.new("RGB", (card_w, card_h), tuple(rng.randrange(200, 245) for _ in range(3)))
    draw = ImageDraw.Draw(card)
    draw.rectangle([0, 0, card_w, round(card_h * 0.16)], fill=(40, 70, 140))
    for row in range(6):  # printed fields
        y = round(card_h * (0.26 + row * 0.11))
        draw.rectangle(
            [round(card_w * 0.38), y, round(card_w * rng.uniform(0.6, 0.93)), y + card_h // 30],
            fill=(60, 60, 70),
        )
    photo_w = round(card_w * 0.28)
    photo_h = round(photo_w * 4 / 3)
    photo_box = (round(card_w * 0.05), round(card_h * 0.24))
    if face is None:
        draw.rectangle(
            [photo_box, (photo_box[0] + photo_w, photo_box[1] + photo_h)], fill=(180, 190, 200)
        )
    else:
        printed = face.convert("L").convert("RGB") if grey else face
        # Printed at ID-card resolution, then seen through the camera.
        printed = printed.resize((120, 160), Image.Resampling.LANCZOS)
        card.paste(printed.resize((photo_w, photo_h), Image.Resampling.BICUBIC), photo_box)
    card = card.convert("RGBA").rotate(rng.uniform(-4, 4), expand=True, resample=Image.BICUBIC)
    x = rng.randrange(0, max(1, 1600 - card.width))
    y = rng.randrange(0, max(1, 1200 - card.height))
    frame.paste(card, (x, y), card)
    frame = ImageEnhance.Brightness(frame).enhance(rng.uniform(0.8, 1.15))
    if turn:
        frame = frame.rotate(turn, expand=True)
    return jpeg(frame, rng.randrange(75, 92))


def _rotate(image: Image.Image, degrees: float) -> Image.Image:
    return image.rotate(degrees, resample=Image.BICUBIC, expand=True, fillcolor=(128, 128, 128))


def _rescale(image: Image.Image, factor: float) -> Image.Image:
    size = (round(image.width * factor), round(image.height * factor))
    return image.resize(size, Image.Resampling.LANCZOS)


def selfie_transforms(name: str) -> list[tuple[str, str, object]]:
    """(label, group, transformation) for a selfie source; each transformation maps an image
    to the selfie's JPEG bytes."""

    def crop_tight(image: Image.Image) -> bytes:
        left, top, right, bottom = face_box(name, image)
        margin = (right - left) // 3
        return jpeg(image.crop((left - margin, top - margin, right + margin, bottom + margin)))

    return [
        ("plain", "clean", lambda image: jpeg(image)),
        ("rotate-10", "moderate", lambda image: jpeg(_rotate(image, 10))),
        ("rotate-minus-20", "hard", lambda image: jpeg(_rotate(image, -20))),
        ("half-size", "moderate", lambda image: jpeg(_rescale(image, 0.5))),
        ("crop", "moderate", crop_tight),
        ("dark", "moderate", lambda image: jpeg(ImageEnhance.Brightness(image).enhance(0.45))),
        ("bright", "moderate", lambda image: jpeg(ImageEnhance.Brightness(image).enhance(1.6))),
        ("blur", "moderate", lambda image: jpeg(image.filter(ImageFilter.GaussianBlur(3)))),
        ("jpeg-15", "moderate", lambda image: jpeg(image, 15)),
    ]


def cases(workdir: Path) -> Iterator[Case]:
    rng = random.Random(20261125)
    photos = load_photos(workdir)
    cards = {  # small, medium and large cards in the frame; grey prints on some
        name: [
            card_photo(portrait(name, photos[name]), rng, fraction, grey)
            for fraction, grey in ((0.3, False), (0.5, True), (0.75, False))
        ]
        for name in CARD_PHOTOS
    }
    for card_name in CARD_PHOTOS:
        card_person = PHOTOS[card_name][0]
        for selfie_name, (selfie_person, _) in PHOTOS.items():
            same = selfie_person == card_person
            others = [name for name, (person, _) in PHOTOS.items() if person == card_person]
            if selfie_name == card_name and len(others) > 1:
                continue  # the same photo on both sides only for a one-photo person
            for label, group, transform in selfie_transforms(selfie_name):
                index = rng.randrange(3)
                card_group = ("hard", "moderate", "clean")[index]
                if "partial" in selfie_name:
                    group = "hard"
                elif card_group != "clean" and group == "clean":
                    group = card_group
                yield Case(
                    validation="face_comparison",
                    name=f"face/{card_name}-card{index}/{selfie_name}/{label}",
                    subject=AnalysisSubject(
                        data=transform(photos[selfie_name]),  # type: ignore[operator]
                        references={"document": cards[card_name][index]},
                    ),
                    expected_valid=same,
                    group=group if same else "wrong",
                )
    # Cards shot sideways (the phone held upright over a landscape card).
    for number, card_name in enumerate(CARD_PHOTOS):
        turn = 90 if number % 2 else -90
        card = card_photo(portrait(card_name, photos[card_name]), rng, 0.6, False, turn)
        card_person = PHOTOS[card_name][0]
        for selfie_name in ("obama.jpg", "obama2.jpg", "biden.jpg", "astronaut"):
            if selfie_name == card_name and card_person == "obama":
                continue
            same = PHOTOS[selfie_name][0] == card_person
            yield Case(
                validation="face_comparison",
                name=f"face/{card_name}-card-turned{turn}/{selfie_name}/plain",
                subject=AnalysisSubject(
                    data=jpeg(photos[selfie_name]), references={"document": card}
                ),
                expected_valid=same,
                group="moderate" if same else "wrong",
            )
    from skimage import data

    for label, array in (("coffee", data.coffee()), ("chelsea", data.chelsea())):
        yield Case(
            validation="face_comparison",
            name=f"face/no-face-selfie/{label}",
            subject=AnalysisSubject(
                data=jpeg(Image.fromarray(array)), references={"document": cards["obama.jpg"][2]}
            ),
            expected_valid=False,
            expected_result="no face in the selfie",
            group="none",
        )
    yield Case(
        validation="face_comparison",
        name="face/no-face-document/empty-card",
        subject=AnalysisSubject(
            data=jpeg(photos["obama.jpg"]),
            references={"document": card_photo(None, rng, 0.6, False)},
        ),
        expected_valid=False,
        expected_result="no face on the document",
        group="none",
    )
