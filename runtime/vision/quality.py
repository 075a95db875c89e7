"""The upload's quality check: is the photo sharp, exposed, large and showing something?

It runs while the upload waits, so it uses Pillow alone (no numpy, no model) and looks at a
reduced copy: the upload's one bounded decode (`runtime.imagemeta.read_meta`: a JPEG decoded at
1/2, 1/4 or 1/8 of its size from its DCT coefficients, a PNG strip by strip), which makes a
12 MP photo cost what a 1 MP one does. Measured on
this machine (2 cores), idle / under a load of 6: 44 / 106 ms (median) for a 12 MP JPEG, 31 / 80
ms for a 2048 px JPEG; a 2048 px PNG has no reduced decoding: 112 / 336 ms.

Sharpness compares the Laplacian with the gradient along the edges of the grey picture bounded
to `ANALYSIS_SIDE` (see `_sharpness`): independent of the photo's contrast and amount of detail.
Sharp photos measure 19-47 (real portraits, scikit-image's samples, drawn vehicles), the same
blurred by a 1-pixel Gaussian at analysis size 5-9, by 2 pixels under 2.5.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PIL import Image, ImageChops, ImageFilter, ImageStat

from runtime.imagemeta import ImageMeta, read_meta
from runtime.validators import near_uniform

#: Longest side the measures are taken on (pixels): blur is judged at about screen size.
ANALYSIS_SIDE = 1024
#: Under this sharpness (see `_sharpness`) the photo is too blurry.
MIN_SHARPNESS = 12.0
#: Mean grey level (0-255) under which a photo is too dark, over which too bright.
MIN_BRIGHTNESS = 45.0
MAX_BRIGHTNESS = 225.0
#: Share of burnt-white pixels (grey >= 250) from which a photo is too bright whatever its mean:
#: half the photo holds no detail. Sharp samples hold under 1%; the astronaut's white suit
#: reaches 40% at twice the light, 57% at 3.5 times.
MAX_CLIPPED = 0.5
#: Standard deviation of the grey levels under which a photo is blank (near-uniform). Wider
#: than `complete`'s rule (`runtime.validators.near_uniform`, also applied): the upload check
#: flags everything `complete` would refuse, and a little more.
MIN_CONTRAST = 8.0
#: Shortest side (pixels) under which a photo is too small to inspect.
MIN_SIDE = 480

#: The Laplacian and the two Sobel gradients, shifted by 128 so that both signs survive
#: Pillow's 8-bit filter output (the gradients halved to stay in range).
_LAPLACIAN = ImageFilter.Kernel((3, 3), (0, 1, 0, 1, -4, 1, 0, 1, 0), scale=1, offset=128)
_SOBEL_X = ImageFilter.Kernel((3, 3), (-1, 0, 1, -2, 0, 2, -1, 0, 1), scale=8, offset=128)
_SOBEL_Y = ImageFilter.Kernel((3, 3), (-1, -2, -1, 0, 0, 0, 1, 2, 1), scale=8, offset=128)

MESSAGES = {
    "too_blurry": "The photo is too blurry.",
    "too_dark": "The photo is too dark.",
    "too_bright": "The photo is too bright.",
    "too_small": "The photo is too small.",
    "blank": "The photo is blank: it shows nothing.",
    "unreadable": "The file is not a readable photo.",
}


@dataclass(frozen=True)
class QualityProblem:
    code: str
    message: str


@dataclass(frozen=True)
class QualityReport:
    passed: bool
    problems: list[QualityProblem] = field(default_factory=list)
    #: sharpness, brightness (mean grey 0-255), contrast (grey std), clipped (share of
    #: burnt-white pixels), width, height (pixels, upright).
    measures: dict[str, float] = field(default_factory=dict)


def _problem(code: str) -> QualityProblem:
    return QualityProblem(code, MESSAGES[code])


def _grey(meta: ImageMeta) -> tuple[Image.Image, int, int]:
    """The photo in grey at most `ANALYSIS_SIDE` long, and its full upright width and height,
    from the upload's one bounded decode (`runtime.imagemeta.read_meta`)."""
    if not meta.decoded or meta.picture is None or meta.upright_size is None:
        raise ValueError("the photo did not decode")
    width, height = meta.upright_size
    grey = meta.picture.convert("L")
    grey.thumbnail((ANALYSIS_SIDE, ANALYSIS_SIDE), Image.Resampling.BILINEAR)
    return grey, width, height


def _magnitude(grey: Image.Image, kernel: ImageFilter.Kernel) -> Image.Image:
    """|kernel response| over the picture, its one-pixel frame left out."""
    response = grey.filter(kernel).crop((1, 1, grey.width - 1, grey.height - 1))
    return ImageChops.difference(response, Image.new("L", response.size, 128))


def _mean(picture: Image.Image) -> float:
    return float(ImageStat.Stat(picture).mean[0])


def _sharpness(grey: Image.Image) -> float:
    """How abrupt the photo's edges are: |Laplacian| over |gradient|, weighted by |gradient|.

    Across an edge blurred over s pixels the Laplacian's peak falls as 1/s faster than the
    gradient's: the ratio measures the blur's width, whatever the amount of detail or the
    contrast in the photo. Weighting by the gradient keeps to the edges, away from the noise of
    flat regions (sensor noise, JPEG blocks)."""
    if grey.width < 3 or grey.height < 3:  # no pixel has all its neighbours
        return 0.0
    gradient = ImageChops.add(_magnitude(grey, _SOBEL_X), _magnitude(grey, _SOBEL_Y))
    laplacian = _magnitude(grey, _LAPLACIAN)
    edge_energy = _mean(ImageChops.multiply(gradient, gradient))
    return 100.0 * _mean(ImageChops.multiply(laplacian, gradient)) / max(4 * edge_energy, 1e-6)


def assess(data: bytes, meta: ImageMeta | None = None) -> QualityReport:
    """Measure the photo and list what is wrong with it (nothing when `passed`). `meta` is the
    upload's decode of `data` when the caller has it (then nothing is decoded again)."""
    try:
        grey, width, height = _grey(meta if meta is not None else read_meta(data))
    except Exception:  # untrusted bytes: any decoder failure is "unreadable"
        return QualityReport(passed=False, problems=[_problem("unreadable")])
    stat = ImageStat.Stat(grey)
    brightness, contrast = stat.mean[0], stat.stddev[0]
    histogram = grey.histogram()
    clipped = sum(histogram[250:]) / max(1, sum(histogram))
    sharpness = _sharpness(grey)
    measures = {
        "sharpness": round(sharpness, 2),
        "brightness": round(brightness, 1),
        "contrast": round(contrast, 1),
        "clipped": round(clipped, 3),
        "width": float(width),
        "height": float(height),
    }
    problems: list[QualityProblem] = []
    if min(width, height) < MIN_SIDE:
        problems.append(_problem("too_small"))
    if contrast < MIN_CONTRAST or near_uniform(grey):
        problems.append(_problem("blank"))
    else:
        if brightness < MIN_BRIGHTNESS:
            problems.append(_problem("too_dark"))
        elif brightness > MAX_BRIGHTNESS or clipped >= MAX_CLIPPED:
            problems.append(_problem("too_bright"))
        if sharpness < MIN_SHARPNESS:
            problems.append(_problem("too_blurry"))
    return QualityReport(passed=not problems, problems=problems, measures=measures)
