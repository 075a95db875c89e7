"""Plates drawn by code: several fonts and country formats, seen under clean, moderate and
hard conditions, plus wrong declared plates (one per clean and moderate photo, one or two
characters changed) and photos without any plate. Seeded."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from benchmarks.vision.common import Case
from benchmarks.vision.render import FONTS, SANS, degrade, font, jpeg, scene, text_fitting
from runtime.vision import AnalysisSubject

VALIDATORS = ("plate",)
SEED = 12

#: (country, format, style): the plates drawn; `None` country means "not said".
STYLES = (
    ("AR", "LLDDDLL", "mercosur"),
    ("AR", "LLLDDD", "ar-old"),
    ("BR", "LLLDLDD", "mercosur"),
    ("BR", "LLLDDDD", "br-old"),
    ("UY", "LLLDDDD", "mercosur"),
    (None, "LLDDDLL", "plain"),
    (None, "LLLDDD", "plain"),
)
BANDS = {"AR": "REPUBLICA ARGENTINA", "BR": "BRASIL", "UY": "URUGUAY"}


def random_plate(plate_format: str, rng: random.Random) -> str:
    return "".join(
        rng.choice(string.ascii_uppercase if kind == "L" else string.digits)
        for kind in plate_format
    )


def spaced(plate: str, plate_format: str) -> str:
    """How the plate is printed: a space where letters meet digits (`AB 123 CD`), none on
    formats that alternate more (Brazil's `ABC1D23`)."""
    changes = [i for i in range(1, len(plate)) if plate_format[i] != plate_format[i - 1]]
    if len(changes) > 2:
        return plate
    return "".join((" " if i in changes else "") + char for i, char in enumerate(plate))


def draw_plate(
    plate: str, plate_format: str, country: str | None, style: str, font_name: str
) -> Image.Image:
    width, height = 520, 150
    dark = style == "ar-old"
    background = (20, 20, 20) if dark else (205, 205, 200) if style == "br-old" else (250, 250, 248)
    ink = (245, 245, 245) if dark else (15, 15, 15)
    image = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((2, 2, width - 3, height - 3), radius=10, outline=ink, width=5)
    top = 14
    if style == "mercosur":
        draw.rectangle((6, 6, width - 7, 38), fill=(20, 50, 150))
        band = BANDS.get(country or "", "MERCOSUR")
        draw.text((width // 2, 22), band, font=font(SANS, 20), fill=(255, 255, 255), anchor="mm")
        top = 44
    text = spaced(plate, plate_format)
    face = text_fitting(draw, text, FONTS[font_name], width - 50, height - top - 18)
    draw.text((width // 2, (top + height - 8) // 2), text, font=face, fill=ink, anchor="mm")
    return image


def plate_photo(plate_image: Image.Image, group: str, rng: random.Random) -> bytes:
    photo = scene(960, 720, rng)
    plate_width = rng.randrange(300, 380)
    plate_height = round(plate_image.height * plate_width / plate_image.width)
    resized = plate_image.resize((plate_width, plate_height), Image.Resampling.LANCZOS)
    x = rng.randrange(200, 960 - plate_width - 200)
    y = rng.randrange(380, 560)
    photo.paste(resized, (x, y))
    return jpeg(degrade(photo, group, rng))


def car_rear(text: str) -> bytes:
    """A drawn car's rear: a red body and a white plate whose widely spaced `AB  123  CD`
    runs over its right edge onto the body (OCR boxes it as `AB`, `123` and `CD`, the first
    two overlapping): issue 37's regression photo."""
    photo = Image.new("RGB", (1280, 960), (70, 75, 82))
    draw = ImageDraw.Draw(photo)
    draw.rectangle([120, 200, 1160, 760], fill=(160, 30, 35))
    draw.rectangle([390, 520, 890, 650], fill=(245, 245, 245), outline=(20, 20, 20), width=6)
    face = ImageFont.truetype(str(FONTS["dejavu-sans"]), 84)
    box = draw.textbbox((0, 0), text, font=face)
    place = (640 - (box[2] - box[0]) / 2, 585 - (box[3] - box[1]) / 2 - box[1])
    draw.text(place, text, fill=(15, 15, 15), font=face)
    return jpeg(photo, quality=90)


def regression_photos() -> list[tuple[str, bytes, str, str]]:
    """The drawn Mercosur photos of the regression tests (`tests/vision/test_ocr_analyzers.py`):
    (name, JPEG, plate, country)."""
    return [
        (
            "mercosur-ar",
            plate_photo(
                draw_plate("AB123CD", "LLDDDLL", "AR", "mercosur", "dejavu-sans"),
                "clean",
                random.Random(1),
            ),
            "AB123CD",
            "AR",
        ),
        ("mercosur-ar-boxed-apart", car_rear("AB  123  CD"), "AB123CD", "AR"),
        (
            "mercosur-br",
            plate_photo(
                draw_plate("ABC1D23", "LLLDLDD", "BR", "mercosur", "dejavu-sans"),
                "clean",
                random.Random(3),
            ),
            "ABC1D23",
            "BR",
        ),
    ]


def wrong_plate(plate: str, plate_format: str, rng: random.Random) -> str:
    """A plate of the same format differing in one or two characters that OCR does not
    confuse with the originals (a digit for another digit, a letter for a letter)."""
    from runtime.vision.codes import shape_key

    while True:
        chars = list(plate)
        for index in rng.sample(range(len(plate)), rng.choice((1, 2))):
            pool = string.ascii_uppercase if plate_format[index] == "L" else string.digits
            chars[index] = rng.choice(pool)
        candidate = "".join(chars)
        if shape_key(candidate) != shape_key(plate):
            return candidate


def no_plate_photos(rng: random.Random) -> Iterator[tuple[str, bytes]]:
    from skimage import data

    for name in ("coffee", "chelsea", "astronaut", "rocket", "immunohistochemistry"):
        yield name, jpeg(getattr(data, name)())
    for index in range(5):
        yield f"scene-{index}", jpeg(degrade(scene(960, 720, rng), "moderate", rng))


def cases(workdir: Path) -> Iterator[Case]:
    rng = random.Random(SEED)
    groups = ["clean"] * 5 + ["moderate"] * 5 + ["hard"] * 3
    fonts = sorted(FONTS)
    index = 0
    for group_index, group in enumerate(groups):
        for country, plate_format, style in STYLES:
            if group == "hard" and index % 2:
                index += 1
                continue
            font_name = fonts[(index + group_index) % len(fonts)]
            plate = random_plate(plate_format, rng)
            photo = plate_photo(
                draw_plate(plate, plate_format, country, style, font_name), group, rng
            )
            kind = f"{(country or 'xx').lower()}-{style}-{plate_format}"
            name = f"plate/{kind}/{font_name}/{group}-{index}"
            declared = (
                {}
                if index % 11 == 5
                else {"plate": spaced(plate, plate_format).lower() if index % 3 == 0 else plate}
            )
            subject = AnalysisSubject(photo, declared=declared, country=country)
            yield Case("plate", name, subject, True, plate, group)
            if group != "hard":
                wrong = wrong_plate(plate, plate_format, rng)
                subject = AnalysisSubject(photo, declared={"plate": wrong}, country=country)
                yield Case("plate", name.replace(group, "wrong"), subject, False, plate, "wrong")
            index += 1
    for name, photo in no_plate_photos(rng):
        for declared in ({"plate": random_plate("LLDDDLL", rng)}, {}):
            subject = AnalysisSubject(photo, declared=declared, country="AR")
            yield Case(
                "plate",
                f"plate/none/{name}/{'declared' if declared else 'open'}",
                subject,
                False,
                None,
                "none",
            )
