"""Drawing helpers the evaluation modules share: fonts, photo degradations, encoding.

Not an evaluation module itself (it has no `cases`); `bench_vision` skips it.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype")
#: Fonts a plate or label may be printed in (Debian's fonts-dejavu and fonts-liberation).
FONTS = {
    "dejavu-sans": FONT_DIR / "dejavu/DejaVuSans-Bold.ttf",
    "dejavu-mono": FONT_DIR / "dejavu/DejaVuSansMono-Bold.ttf",
    "dejavu-condensed": FONT_DIR / "dejavu/DejaVuSansCondensed-Bold.ttf",
    "liberation-sans": FONT_DIR / "liberation/LiberationSans-Bold.ttf",
    "liberation-mono": FONT_DIR / "liberation/LiberationMono-Bold.ttf",
    "liberation-narrow": FONT_DIR / "liberation/LiberationSansNarrow-Bold.ttf",
}
MONO = FONT_DIR / "dejavu/DejaVuSansMono.ttf"
SANS = FONT_DIR / "dejavu/DejaVuSans.ttf"

#: Degradation strength by group: (perspective share, blur sigma, noise sigma, light, glare).
CONDITIONS: dict[str, tuple[float, float, float, float, bool]] = {
    "clean": (0.02, 0.0, 2.0, 1.0, False),
    "moderate": (0.07, 1.0, 7.0, 0.65, False),
    "hard": (0.13, 1.8, 14.0, 0.38, True),
}


def font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


def text_fitting(
    draw: ImageDraw.ImageDraw, text: str, path: Path, width: int, height: int
) -> ImageFont.FreeTypeFont:
    """The largest size of font `path` at which `text` fits in width x height."""
    size = height
    while size > 8:
        face = font(path, size)
        left, top, right, bottom = draw.textbbox((0, 0), text, font=face)
        if right - left <= width and bottom - top <= height:
            return face
        size -= 2
    return font(path, size)


def perspective(image: Image.Image, share: float, rng: random.Random) -> Image.Image:
    """The image seen slightly from the side: each corner moved by up to `share` of the size."""
    import cv2

    width, height = image.size
    source = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    moved = np.float32(
        [
            [x + rng.uniform(-share, share) * width, y + rng.uniform(-share, share) * height]
            for x, y in source
        ]
    )
    matrix = cv2.getPerspectiveTransform(source, moved)
    warped = cv2.warpPerspective(
        np.asarray(image), matrix, (width, height), borderMode=cv2.BORDER_REPLICATE
    )
    return Image.fromarray(warped)


def degrade(image: Image.Image, group: str, rng: random.Random) -> Image.Image:
    """The photo under the group's conditions (see `CONDITIONS`)."""
    share, blur, noise, light, glare = CONDITIONS[group]
    image = perspective(image, share, rng)
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(blur * rng.uniform(0.8, 1.2)))
    pixels = np.asarray(image).astype(np.float32)
    if glare:
        height, width = pixels.shape[:2]
        cy, cx = rng.uniform(0.3, 0.7) * height, rng.uniform(0.3, 0.7) * width
        yy, xx = np.mgrid[0:height, 0:width]
        spot = np.exp(-(((yy - cy) / (0.12 * height)) ** 2 + ((xx - cx) / (0.1 * width)) ** 2))
        pixels += 150 * spot[:, :, None]
    pixels *= light * rng.uniform(0.9, 1.1)
    pixels += np.random.default_rng(rng.randrange(2**32)).normal(0, noise, pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def jpeg(image: Image.Image | npt.NDArray[np.uint8], quality: int = 88) -> bytes:
    if not isinstance(image, Image.Image):
        image = Image.fromarray(image)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def scene(width: int, height: int, rng: random.Random) -> Image.Image:
    """A plain car-ish background: a vertical gradient body with a darker bumper band."""
    top = np.array([rng.randrange(40, 220) for _ in range(3)], dtype=np.float32)
    bottom = top * rng.uniform(0.4, 0.8)
    ramp = np.linspace(0, 1, height, dtype=np.float32)[:, None, None]
    pixels = top * (1 - ramp) + bottom * ramp
    pixels = np.broadcast_to(pixels, (height, width, 3)).copy()
    pixels[int(height * 0.72) : int(height * 0.85)] *= 0.45
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
