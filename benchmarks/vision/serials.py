"""Serial-number labels drawn by code (goods stickers, phone IMEI labels, bike frame
stamps), under clean, moderate and hard conditions, with wrong declared serials and photos
without a label. Seeded."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw

from benchmarks.vision.common import Case
from benchmarks.vision.render import FONTS, SANS, degrade, font, jpeg
from runtime.vision import AnalysisSubject

VALIDATORS = ("serialNumber",)
SEED = 5218

#: (kind, caption, serial maker).
KINDS = ("goods", "cellphone", "bike")
ALNUM = string.ascii_uppercase + string.digits


def random_serial(kind: str, rng: random.Random) -> str:
    if kind == "cellphone":
        return "35" + "".join(rng.choice(string.digits) for _ in range(13))
    if kind == "bike":
        return (
            "WTU"
            + "".join(rng.choice(string.digits) for _ in range(3))
            + rng.choice("ABCDEFGHJK")
            + "".join(rng.choice(string.digits) for _ in range(4))
        )
    return "".join(rng.choice(ALNUM) for _ in range(rng.randrange(9, 13)))


def wrong_serial(serial: str, rng: random.Random) -> str:
    from runtime.vision.codes import shape_key

    while True:
        chars = list(serial)
        for index in rng.sample(range(len(serial)), 2):
            chars[index] = rng.choice(
                string.digits if serial[index].isdigit() else string.ascii_uppercase
            )
        if shape_key("".join(chars)) != shape_key(serial):
            return "".join(chars)


def label_photo(kind: str, serial: str, font_name: str, group: str, rng: random.Random) -> bytes:
    photo = Image.new("RGB", (960, 720), tuple(rng.randrange(50, 160) for _ in range(3)))
    draw = ImageDraw.Draw(photo)
    x, y = rng.randrange(120, 260), rng.randrange(180, 320)
    draw.rectangle((x, y, x + 600, y + 230), fill=(248, 248, 245), outline=(30, 30, 30), width=3)
    caption = {"cellphone": "IMEI:", "bike": "FRAME No.", "goods": "S/N:"}[kind]
    heading = {
        "cellphone": "Model XR-21  Made in China",
        "bike": "Trek bicycle",
        "goods": "Model PX-400  220V 50Hz",
    }[kind]
    draw.text((x + 24, y + 18), heading, font=font(SANS, 24), fill=(40, 40, 40))
    draw.text(
        (x + 24, y + 70), f"{caption} {serial}", font=font(FONTS[font_name], 34), fill=(0, 0, 0)
    )
    for bar in range(60):  # a barcode-like strip under the number
        if rng.random() < 0.55:
            left = x + 30 + bar * 9
            draw.rectangle((left, y + 140, left + rng.choice((2, 4, 6)), y + 205), fill=(0, 0, 0))
    return jpeg(degrade(photo, group, rng))


def cases(workdir: Path) -> Iterator[Case]:
    rng = random.Random(SEED)
    fonts = sorted(FONTS)
    plan = ["clean"] * 9 + ["moderate"] * 9 + ["hard"] * 4
    for index, group in enumerate(plan):
        kind = KINDS[index % len(KINDS)]
        serial = random_serial(kind, rng)
        photo = label_photo(kind, serial, fonts[index % len(fonts)], group, rng)
        declared = {
            "serialNumber": serial if index % 2 else "-".join([serial[:4], serial[4:]]).lower()
        }
        name = f"serialNumber/{kind}/{fonts[index % len(fonts)]}/{group}-{index}"
        yield Case(
            "serialNumber", name, AnalysisSubject(photo, declared=declared), True, serial, group
        )
        if index % 3 == 0:
            wrong = {"serialNumber": wrong_serial(serial, rng)}
            yield Case(
                "serialNumber",
                f"{name}/wrong",
                AnalysisSubject(photo, declared=wrong),
                False,
                serial,
                "wrong",
            )
    from skimage import data

    for name in ("coffee", "chelsea", "rocket"):
        subject = AnalysisSubject(
            jpeg(getattr(data, name)()), declared={"serialNumber": random_serial("goods", rng)}
        )
        yield Case("serialNumber", f"serialNumber/none/{name}", subject, False, None, "none")
