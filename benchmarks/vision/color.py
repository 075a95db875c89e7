"""`color` cases: simple drawn vehicles (car, motorcycle, machinery) in the clients' nine colors,
with shading, a highlight, dark windows and tyres, on varied backgrounds (sky and road, grass, a
building, a parking lot, a plain wall), declared rightly (in English, Spanish or Portuguese) and
wrongly (often a neighbouring color: white/grey, yellow/gold, orange/red). Seeded. One real
photo too: scikit-image's red motorcycle in a cluttered garage (`stereo_motorcycle`).
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

from benchmarks.vision.common import Case
from runtime.vision import AnalysisSubject

VALIDATORS = ("color",)

Color = tuple[int, int, int]

#: Paint shades per color, as seen on real vehicles.
PAINTS: dict[str, tuple[Color, ...]] = {
    "yellow": ((240, 200, 20), (250, 220, 60), (230, 185, 0)),
    "blue": ((30, 60, 160), (60, 120, 200), (20, 40, 100)),
    "white": ((235, 235, 235), (245, 245, 240), (225, 228, 232)),
    "gold": ((200, 170, 95), (185, 155, 85), (205, 180, 110)),
    "grey": ((128, 128, 132), (175, 177, 180), (95, 97, 100)),
    "orange": ((240, 120, 20), (220, 100, 30), (250, 140, 40)),
    "black": ((25, 25, 28), (40, 40, 45), (15, 15, 20)),
    "red": ((190, 20, 25), (150, 15, 30), (220, 40, 40)),
    "green": ((30, 120, 50), (20, 80, 40), (90, 160, 60)),
}
#: How clients also write each color (the analyzer must accept these).
ALIASES: dict[str, tuple[str, ...]] = {
    "yellow": ("amarillo", "amarelo"),
    "blue": ("azul", "Azul"),
    "white": ("blanco", "branco"),
    "gold": ("dorado", "dourado"),
    "grey": ("gray", "silver", "gris", "prata", "plata"),
    "orange": ("naranja", "laranja"),
    "black": ("negro", "preto"),
    "red": ("rojo", "vermelho"),
    "green": ("verde",),
}
#: The wrong declaration most likely to fool an analyzer, per color.
NEIGHBOUR = {
    "yellow": "gold",
    "blue": "green",
    "white": "grey",
    "gold": "yellow",
    "grey": "white",
    "orange": "red",
    "black": "grey",
    "red": "orange",
    "green": "blue",
}
BACKGROUNDS = ("street", "countryside", "building", "parking", "wall")
VEHICLES = ("car", "moto", "machinery")
WIDTH, HEIGHT = 800, 600


def _jitter(color: Color, rng: random.Random, amount: int) -> Color:
    red, green, blue = (max(0, min(255, c + rng.randint(-amount, amount))) for c in color)
    return red, green, blue


def _gradient(
    draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], top: Color, bottom: Color
) -> None:
    left, upper, right, lower = box
    for y in range(upper, lower):
        t = (y - upper) / max(1, lower - upper - 1)
        draw.line(
            [(left, y), (right, y)],
            fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)),
        )


def background(kind: str, rng: random.Random) -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT))
    draw = ImageDraw.Draw(image)
    horizon = rng.randrange(230, 330)
    sky = _jitter((110, 160, 225), rng, 25)
    if kind in ("street", "countryside"):
        _gradient(draw, (0, 0, WIDTH, horizon), _jitter((70, 120, 200), rng, 20), sky)
        for _ in range(rng.randrange(0, 4)):  # clouds
            x, y = rng.randrange(WIDTH), rng.randrange(horizon - 40)
            draw.ellipse(
                [x, y, x + rng.randrange(80, 200), y + rng.randrange(30, 60)], fill=(240, 242, 245)
            )
        ground = (95, 95, 98) if kind == "street" else (70, 130, 45)
        _gradient(
            draw, (0, horizon, WIDTH, HEIGHT), _jitter(ground, rng, 15), _jitter(ground, rng, 25)
        )
        if kind == "street":
            draw.rectangle([0, horizon + 120, WIDTH, horizon + 126], fill=(230, 230, 230))
    elif kind == "building":
        wall = rng.choice(((170, 80, 60), (210, 195, 160), (150, 150, 155)))
        _gradient(draw, (0, 0, WIDTH, horizon + 60), _jitter(wall, rng, 15), _jitter(wall, rng, 15))
        for x in range(30, WIDTH, 140):
            for y in range(20, horizon, 110):
                draw.rectangle([x, y, x + 70, y + 70], fill=(60, 70, 85))
        _gradient(draw, (0, horizon + 60, WIDTH, HEIGHT), (150, 150, 150), (120, 120, 122))
    elif kind == "parking":
        _gradient(
            draw,
            (0, 0, WIDTH, HEIGHT),
            _jitter((85, 85, 88), rng, 15),
            _jitter((110, 110, 112), rng, 15),
        )
        for x in range(0, WIDTH, 160):
            draw.line([(x, 0), (x + 60, HEIGHT)], fill=(225, 225, 210), width=6)
    else:
        _gradient(
            draw,
            (0, 0, WIDTH, HEIGHT),
            _jitter((200, 200, 195), rng, 30),
            _jitter((160, 160, 155), rng, 30),
        )
    noise = Image.effect_noise((WIDTH, HEIGHT), rng.uniform(8, 20)).convert("RGB")
    return Image.blend(image, noise, 0.08)


def _shaded(color: Color, factor: float) -> Color:
    red, green, blue = (max(0, min(255, round(c * factor))) for c in color)
    return red, green, blue


def draw_vehicle(image: Image.Image, kind: str, paint: Color, rng: random.Random) -> None:
    """The vehicle's body in `paint`, lighter on top and darker below, with a highlight, dark
    glass, black tyres and a shadow on the ground."""
    draw = ImageDraw.Draw(image, "RGBA")
    scale = rng.uniform(0.55, 0.85)
    width = round(WIDTH * scale)
    left = (WIDTH - width) // 2 + rng.randrange(-40, 41)
    ground = rng.randrange(round(HEIGHT * 0.72), round(HEIGHT * 0.88))
    wheel = round(width * (0.1 if kind != "machinery" else 0.14))
    draw.ellipse([left - 10, ground - 12, left + width + 10, ground + 14], fill=(0, 0, 0, 110))
    if kind == "car":
        body_top = ground - round(width * 0.28)
        _gradient(
            draw,
            (left, body_top, left + width, ground - wheel // 2),
            _shaded(paint, 1.12),
            _shaded(paint, 0.78),
        )
        cabin = [
            (left + width * 0.2, body_top),
            (left + width * 0.32, body_top - width * 0.17),
            (left + width * 0.7, body_top - width * 0.17),
            (left + width * 0.82, body_top),
        ]
        draw.polygon(cabin, fill=_shaded(paint, 1.05))
        glass = [
            (x + (6 if i in (0, 1) else -6), y + (6 if i in (1, 2) else 0))
            for i, (x, y) in enumerate(cabin)
        ]
        draw.polygon(glass, fill=(45, 55, 70))
        draw.line(
            [(left + width * 0.51, body_top), (left + width * 0.51, body_top - width * 0.17)],
            fill=_shaded(paint, 1.0),
            width=8,
        )
        wheels = (left + width * 0.2, left + width * 0.8)
    elif kind == "moto":
        body_top = ground - round(width * 0.3)
        draw.polygon(
            [
                (left + width * 0.2, body_top),
                (left + width * 0.72, body_top - width * 0.06),
                (left + width * 0.78, body_top + width * 0.2),
                (left + width * 0.28, body_top + width * 0.22),
            ],
            fill=paint,
        )
        draw.rectangle(
            [
                left + width * 0.3,
                body_top + width * 0.08,
                left + width * 0.7,
                body_top + width * 0.2,
            ],
            fill=_shaded(paint, 0.82),
        )
        draw.line(
            [(left + width * 0.75, body_top), (left + width * 0.86, ground - wheel)],
            fill=(60, 60, 60),
            width=10,
        )
        draw.rectangle(
            [
                left + width * 0.12,
                body_top - width * 0.03,
                left + width * 0.45,
                body_top + width * 0.02,
            ],
            fill=(30, 30, 30),
        )
        wheel = round(width * 0.13)
        wheels = (left + width * 0.18, left + width * 0.85)
    else:
        body_top = ground - round(width * 0.45)
        _gradient(
            draw,
            (left, body_top + round(width * 0.15), left + width, ground - wheel // 2),
            _shaded(paint, 1.1),
            _shaded(paint, 0.75),
        )
        draw.rectangle(
            [left + width * 0.1, body_top, left + width * 0.45, body_top + width * 0.16],
            fill=_shaded(paint, 1.0),
        )
        draw.rectangle(
            [left + width * 0.14, body_top + 8, left + width * 0.41, body_top + width * 0.12],
            fill=(50, 60, 72),
        )
        draw.line(
            [
                (left + width * 0.6, body_top + width * 0.15),
                (left + width * 0.95, body_top - width * 0.1),
            ],
            fill=_shaded(paint, 0.95),
            width=round(width * 0.06),
        )
        wheels = (left + width * 0.22, left + width * 0.78)
    # A highlight along the body, as the sky reflects on paint.
    draw.rectangle(
        [left + width * 0.1, body_top + 6, left + width * 0.9, body_top + 14],
        fill=(255, 255, 255, 90),
    )
    for x in wheels:
        draw.ellipse([x - wheel, ground - 2 * wheel, x + wheel, ground], fill=(20, 20, 22))
        draw.ellipse(
            [x - wheel * 0.45, ground - wheel * 1.45, x + wheel * 0.45, ground - wheel * 0.55],
            fill=(150, 150, 155),
        )


def photo(color: str, rng: random.Random) -> tuple[bytes, str]:
    kind = rng.choice(VEHICLES)
    scene = rng.choice(BACKGROUNDS)
    image = background(scene, rng)
    draw_vehicle(image, kind, _jitter(rng.choice(PAINTS[color]), rng, 8), rng)
    image = ImageEnhance.Brightness(image).enhance(rng.uniform(0.75, 1.2))
    if rng.random() < 0.3:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2)))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=rng.randrange(60, 92))
    return buffer.getvalue(), f"{kind}-{scene}"


def cases(workdir: Path) -> Iterator[Case]:
    rng = random.Random(1125)
    for color in PAINTS:
        for index in range(12):
            data, label = photo(color, rng)
            group = "clean" if index % 3 else "moderate"
            declared = rng.choice((color, *ALIASES[color]))
            yield Case(
                validation="color",
                name=f"color/{color}/{label}/{index}/declared-{declared}",
                subject=AnalysisSubject(data=data, declared={"color": declared}),
                expected_valid=True,
                expected_result=color,
                group=group,
            )
            wrong = NEIGHBOUR[color] if index % 2 else rng.choice([c for c in PAINTS if c != color])
            yield Case(
                validation="color",
                name=f"color/{color}/{label}/{index}/declared-{wrong}",
                subject=AnalysisSubject(data=data, declared={"color": wrong}),
                expected_valid=False,
                expected_result=color,
                group="wrong",
            )
    from skimage import data

    buffer = io.BytesIO()
    Image.fromarray(data.stereo_motorcycle()[0]).save(buffer, "JPEG", quality=90)
    for declared, expected in (
        ("red", True),
        ("vermelho", True),
        ("orange", False),
        ("black", False),
    ):
        yield Case(
            validation="color",
            name=f"color/red/real-motorcycle-garage/declared-{declared}",
            subject=AnalysisSubject(data=buffer.getvalue(), declared={"color": declared}),
            expected_valid=expected,
            expected_result="red",
            group="moderate" if expected else "wrong",
        )
