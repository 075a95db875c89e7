"""The registry's photos (`benchmarks/vision/registry_photos.json`, issue 37): the held-out ones
only report, the tuning ones may choose a threshold. No photo is both, a tuning photo is never a
held-out one, and every figure that reads the registry without naming a role reads the held-out
set alone."""

from __future__ import annotations

import io

from benchmarks.vision import registry_photos
from benchmarks.vision.registry_photos import HELD_OUT, TUNING


def test_every_photo_has_one_role_and_the_held_out_set_is_the_default() -> None:
    everyone = registry_photos.photos(role=None)
    assert {photo["role"] for photo in everyone} == {HELD_OUT, TUNING}
    assert registry_photos.photos() == [photo for photo in everyone if photo["role"] == HELD_OUT]
    assert registry_photos.photos("color", TUNING)
    assert all(photo["kind"] == "color" for photo in registry_photos.photos(role=TUNING))


def test_no_tuning_photo_is_a_held_out_one() -> None:
    held_out = registry_photos.photos(role=HELD_OUT)
    taken = {(photo["member"], tuple(photo.get("crop", ()))) for photo in held_out}
    files = {photo["file"] for photo in held_out}
    whole = {photo["sha256"] for photo in held_out if "crop" not in photo}
    for photo in registry_photos.photos(role=TUNING):
        assert (photo["member"], tuple(photo.get("crop", ()))) not in taken, photo["file"]
        assert photo["file"] not in files
        if "crop" not in photo:
            assert photo["sha256"] not in whole, photo["file"]


def test_a_crop_is_that_part_of_the_member_as_png() -> None:
    from PIL import Image

    picture = Image.new("RGB", (40, 30), (10, 20, 30))
    picture.paste((200, 0, 0), (10, 5, 30, 25))
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=95)
    cropped = Image.open(io.BytesIO(registry_photos._cropped(buffer.getvalue(), [10, 5, 30, 25])))
    assert cropped.format == "PNG" and cropped.size == (20, 20)
    red, green, blue = cropped.getpixel((10, 10))  # type: ignore[misc]
    assert red > 180 and green < 40 and blue < 40
