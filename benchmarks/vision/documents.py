"""Identity documents drawn by code: TD1 cards and TD3 passport pages with printed fields and
an MRZ made by the `mrz` package (an implementation independent of the runtime's), and cards
with printed fields only. Each photo is asked all five identity validations with the true
declared values, then one with a wrong value. Seeded."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from benchmarks.vision.common import Case
from benchmarks.vision.render import FONT_DIR, MONO, SANS, degrade, font, jpeg
from runtime.vision import AnalysisSubject

VALIDATORS = ("dni", "full_name", "birthdate", "age", "sex")
SEED = 9303
NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)
BOLD = FONT_DIR / "dejavu/DejaVuSans-Bold.ttf"

SURNAMES = (
    "Pérez Gómez",
    "García",
    "Fernández",
    "López",
    "Martínez Ruiz",
    "Sánchez",
    "Romero",
    "Díaz",
    "Álvarez",
    "Torres",
    "Núñez",
    "Benítez Acuña",
)
GIVEN = (
    "María José",
    "Juan Carlos",
    "Lucía",
    "Martín",
    "Sofía Belén",
    "Diego",
    "Valentina",
    "Tomás Iván",
    "Camila",
    "Joaquín",
    "Ana",
    "Agustín Emilio",
)


@dataclass(frozen=True)
class Holder:
    surname: str
    given: str
    number: str
    birthdate: dt.date
    sex: str
    expiry: dt.date


def random_holder(rng: random.Random, minor: bool = False) -> Holder:
    years = rng.randrange(14, 17) if minor else rng.randrange(19, 80)
    birthdate = NOW.date() - dt.timedelta(days=365 * years + rng.randrange(30, 330))
    return Holder(
        surname=rng.choice(SURNAMES),
        given=rng.choice(GIVEN),
        number=str(rng.randrange(10_000_000, 45_000_000)),
        birthdate=birthdate,
        sex=rng.choice("MF"),
        expiry=NOW.date() + dt.timedelta(days=rng.randrange(200, 3000)),
    )


def mrz_lines(holder: Holder, kind: str, passport_number: str) -> list[str]:
    from mrz.generator.td1 import TD1CodeGenerator
    from mrz.generator.td3 import TD3CodeGenerator

    birth, expiry = holder.birthdate.strftime("%y%m%d"), holder.expiry.strftime("%y%m%d")
    if kind == "TD1":
        code = TD1CodeGenerator(
            "ID",
            "ARG",
            holder.number,
            birth,
            holder.sex,
            expiry,
            "ARG",
            holder.surname,
            holder.given,
        )
    else:
        code = TD3CodeGenerator(
            "P",
            "ARG",
            holder.surname,
            holder.given,
            passport_number,
            "ARG",
            birth,
            holder.sex,
            expiry,
            holder.number,
        )
    return str(code).split("\n")


def draw_document(holder: Holder, kind: str, passport_number: str) -> Image.Image:
    """A card (TD1, or printed-only `card`) or a passport data page (TD3)."""
    size = (1250, 880) if kind == "TD3" else (1012, 638)
    page = Image.new("RGB", size, (236, 232, 220) if kind == "TD3" else (222, 232, 240))
    draw = ImageDraw.Draw(page)
    title = "PASAPORTE / PASSPORT" if kind == "TD3" else "DOCUMENTO NACIONAL DE IDENTIDAD"
    draw.text((40, 24), "REPUBLICA ARGENTINA", font=font(BOLD, 30), fill=(20, 40, 90))
    draw.text((40, 64), title, font=font(SANS, 22), fill=(20, 40, 90))
    draw.rectangle((40, 120, 270, 410), fill=(170, 175, 180))
    number = passport_number if kind == "TD3" else f"{int(holder.number):,}".replace(",", ".")
    fields = [
        ("Apellido / Surname", holder.surname.upper()),
        ("Nombre / Name", holder.given.upper()),
        ("Sexo / Sex", holder.sex),
        ("Nacionalidad / Nationality", "ARGENTINA"),
        ("Fecha de nacimiento / Date of birth", holder.birthdate.strftime("%d/%m/%Y")),
        ("Documento / Document", number),
        ("Fecha de vencimiento / Date of expiry", holder.expiry.strftime("%d/%m/%Y")),
    ]
    label_font, value_font = font(SANS, 17), font(BOLD, 25)
    x, y, step = 310, 118, (70 if kind == "TD3" else 50)
    for index, (label, value) in enumerate(fields):
        column = x + (300 if index in (3, 6) and kind != "TD3" else 0)
        row = y + step * (
            index if kind == "TD3" else (index if index < 3 else index - 1 if index < 6 else 5)
        )
        if kind != "TD3" and index in (3, 6):
            row = y + step * (2 if index == 3 else 4)
        draw.text((column, row), label, font=label_font, fill=(70, 70, 80))
        draw.text((column, row + 20), value, font=value_font, fill=(10, 10, 10))
    if kind in ("TD1", "TD3"):
        lines = mrz_lines(holder, kind, passport_number)
        size_px = 40 if kind == "TD3" else 42
        top = size[1] - len(lines) * (size_px + 12) - 20
        for index, line in enumerate(lines):
            draw.text(
                (30, top + index * (size_px + 12)), line, font=font(MONO, size_px), fill=(0, 0, 0)
            )
    return page


def document_photo(page: Image.Image, group: str, rng: random.Random) -> bytes:
    width = 1280
    photo = Image.new(
        "RGB", (width, round(width * 0.75)), tuple(rng.randrange(60, 140) for _ in range(3))
    )
    scale = rng.uniform(0.86, 0.92) * width / page.width
    page = page.resize(
        (round(page.width * scale), round(page.height * scale)), Image.Resampling.LANCZOS
    )
    photo.paste(page, ((width - page.width) // 2, (photo.height - page.height) // 2))
    return jpeg(degrade(photo, group, rng), quality=90)


def declared_of(holder: Holder, kind: str, passport_number: str) -> dict[str, object]:
    return {
        "identification": passport_number
        if kind == "TD3"
        else f"{int(holder.number):,}".replace(",", "."),
        "firstName": holder.given,
        "lastName": holder.surname,
        "birthdate": holder.birthdate.isoformat(),
        "sex": 1 if holder.sex == "M" else 2,
    }


def expected_results(holder: Holder, kind: str, passport_number: str) -> dict[str, object]:
    from runtime.vision.identity import age_at

    fold = str.maketrans("ÁÉÍÓÚÑáéíóúñ", "AEIOUNaeioun")
    name = f"{holder.given} {holder.surname}".upper()
    return {
        "dni": passport_number if kind == "TD3" else holder.number,
        "full_name": name.translate(fold),  # the MRZ has no accents; OCR drops them too
        "birthdate": holder.birthdate.isoformat(),
        "age": age_at(holder.birthdate, NOW.date()),
        "sex": 1 if holder.sex == "M" else 2,
    }


def wrong_declaration(
    validation: str, declared: dict[str, object], rng: random.Random
) -> dict[str, object]:
    wrong = dict(declared)
    if validation == "dni":
        wrong["identification"] = str(rng.randrange(10_000_000, 45_000_000))
    elif validation == "full_name":
        wrong["firstName"] = rng.choice([g for g in GIVEN if g != declared["firstName"]])
    elif validation == "birthdate":
        date = dt.date.fromisoformat(str(declared["birthdate"]))
        wrong["birthdate"] = (date + dt.timedelta(days=rng.choice((-400, -31, 1, 365)))).isoformat()
    elif validation == "sex":
        wrong["sex"] = 3 - int(str(declared["sex"]))
    return wrong


def cases(workdir: Path) -> Iterator[Case]:
    rng = random.Random(SEED)
    plan = [("TD1", "clean")] * 6 + [("TD1", "moderate")] * 5 + [("TD3", "clean")] * 6
    plan += [("TD3", "moderate")] * 5 + [("TD1", "hard"), ("TD3", "hard")]
    plan += [("card", "clean")] * 3 + [("card", "moderate")] * 2
    for index, (kind, group) in enumerate(plan):
        holder = random_holder(rng, minor=index % 9 == 4)
        passport_number = f"A{rng.choice('ABCDEFGH')}{rng.randrange(1_000_000, 9_999_999)}"
        photo = document_photo(draw_document(holder, kind, passport_number), group, rng)
        declared = declared_of(holder, kind, passport_number)
        expected = expected_results(holder, kind, passport_number)
        source = "mrz" if kind != "card" else "printed"
        name = f"{kind.lower()}/{source}/{group}-{index}"
        for validation in VALIDATORS:
            subject = AnalysisSubject(photo, declared=declared, country="AR", now=NOW)
            valid = validation != "age" or int(str(expected["age"])) >= 18
            yield Case(
                validation,
                f"{validation}/{name}",
                subject,
                valid,
                expected[validation],
                group if valid else "wrong",
            )
        wrong_validation = ("dni", "full_name", "birthdate", "sex")[index % 4]
        subject = AnalysisSubject(
            photo,
            declared=wrong_declaration(wrong_validation, declared, rng),
            country="AR",
            now=NOW,
        )
        yield Case(
            wrong_validation,
            f"{wrong_validation}/{name}/wrong",
            subject,
            False,
            expected[wrong_validation],
            "wrong",
        )
