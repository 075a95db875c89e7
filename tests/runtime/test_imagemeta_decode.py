"""The upload's one bounded decode (`runtime.imagemeta`): a PNG decoded strip by strip gives
the picture a whole decode gives; what has no reduced decode is refused over its budget; the
shared copy is small whatever the photo's size."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops, ImageDraw

from runtime import imagemeta
from runtime.imagemeta import DECODE_SIDE, MAX_WHOLE_DECODE_PIXELS, read_meta


def scene(size: tuple[int, int]) -> Image.Image:
    """Gradients, shapes and noise: every PNG row filter (Sub, Up, Average, Paeth) gets used."""
    picture = Image.radial_gradient("L").resize(size).convert("RGB")
    draw = ImageDraw.Draw(picture)
    for index in range(0, size[0], 97):
        draw.ellipse((index, index // 2, index + 140, index // 2 + 90), fill=(index % 255, 90, 30))
        draw.line((0, index, size[0], size[1] - index), fill=(20, 200, index % 255), width=3)
    noise = Image.effect_noise(size, 40).convert("RGB")
    return ImageChops.add(picture, noise, scale=1.3)


def png(picture: Image.Image, **options: object) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", **options)
    return buffer.getvalue()


def whole(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        return imagemeta._small_rgb(opened)


@pytest.mark.parametrize(
    "mode", ["RGB", "RGBA", "L", "LA", "P", "1"], ids=lambda mode: f"mode-{mode}"
)
@pytest.mark.parametrize("size", [(2100, 1300), (700, 500), (125, 2500)], ids=str)
def test_a_png_decoded_in_strips_equals_its_whole_decode(mode: str, size: tuple[int, int]) -> None:
    picture = scene(size)
    converted = picture.convert(mode) if mode != "P" else picture.quantize(64)
    data = png(converted)
    meta = read_meta(data)
    assert meta.decoded and (meta.width, meta.height) == size
    assert meta.picture is not None
    expected = whole(data)
    assert meta.picture.size == expected.size
    difference = ImageChops.difference(meta.picture, expected).getextrema()
    assert max(high for _, high in difference) <= 1  # rounding of the box reduction only


def test_the_shared_copy_is_small_for_every_accepted_format() -> None:
    big = scene((3000, 2000))
    for kind in ("JPEG", "PNG", "WEBP"):
        buffer = io.BytesIO()
        big.save(buffer, kind)
        meta = read_meta(buffer.getvalue())
        assert meta.decoded and meta.format == kind
        assert meta.picture is not None and max(meta.picture.size) <= DECODE_SIDE
        assert meta.phash is not None


def test_a_16_bit_png_without_reduced_decode_is_refused_over_its_budget() -> None:
    side = int(MAX_WHOLE_DECODE_PIXELS**0.5) + 10
    data = png(Image.new("I;16", (side, side), 1000))
    meta = read_meta(data)
    assert (meta.decoded, meta.width, meta.height) == (False, side, side)
    small = png(scene((800, 600)).convert("L").convert("I;16"))
    assert read_meta(small).decoded is True


def test_a_png_whose_rows_end_early_is_not_an_image() -> None:
    data = png(scene((800, 600)))
    idat = data.index(b"IDAT")
    length = int.from_bytes(data[idat - 4 : idat], "big")
    cut = data[: idat + 4 + length // 2]  # half the pixel data, no CRC, no IEND
    assert read_meta(cut).decoded is False
