"""Report thumbnails: downscaled, RGB, and None (not an exception) for what Pillow cannot read."""

from __future__ import annotations

import io

from PIL import Image

from server.thumbnails import THUMBNAIL_SIZE, thumbnail, thumbnail_jpeg

from .samples import photo


def test_photos_are_downscaled_to_the_thumbnail_size() -> None:
    image = thumbnail(photo(1, size=(1280, 960)))
    assert image is not None
    assert image.size == (THUMBNAIL_SIZE, 300)
    assert image.mode == "RGB"
    encoded = thumbnail_jpeg(photo(2, size=(1280, 960)))
    assert encoded is not None and encoded[:2] == b"\xff\xd8"
    assert len(encoded) < len(photo(2, size=(1280, 960))) / 4


def test_small_and_transparent_images_become_rgb_without_upscaling() -> None:
    out = io.BytesIO()
    Image.new("RGBA", (120, 80), (255, 0, 0, 128)).save(out, format="PNG")
    image = thumbnail(out.getvalue())
    assert image is not None and image.size == (120, 80) and image.mode == "RGB"


def test_unreadable_bytes_give_none() -> None:
    assert thumbnail(b"not an image at all") is None
    assert thumbnail_jpeg(b"%PDF-1.7 ...") is None
    assert thumbnail(photo(3)[:200]) is None  # truncated JPEG


def test_decompression_bombs_give_none() -> None:
    out = io.BytesIO()
    Image.new("1", (12_000, 12_000)).save(out, format="PNG")  # 144 Mpx, a few KB
    assert thumbnail(out.getvalue()) is None
