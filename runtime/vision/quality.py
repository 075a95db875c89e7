"""The upload's quality check: is the photo sharp, exposed, large and showing something?

It runs while the upload waits, so it uses Pillow alone (no numpy, no model) and looks at a
reduced copy: the upload's one bounded decode (`runtime.imagemeta.read_meta`: a JPEG decoded at
1/2, 1/4 or 1/8 of its size from its DCT coefficients, a PNG strip by strip), which makes a
12 MP photo cost what a 1 MP one does. Measured on
this machine (2 cores), idle / under a load of 6: 44 / 106 ms (median) for a 12 MP JPEG, 31 / 80
ms for a 2048 px JPEG; a 2048 px PNG has no reduced decoding: 112 / 336 ms (measured before the
subject's tiles were added, which cost about 15% more: 0.15 against 0.13 s for the 12 MP JPEG
at a load of 10; leaving the backdrop out costs about 1% more: 48.0 against 47.3 ms of CPU
for a 12 MP JPEG, alternated, at a load of 2).

Sharpness compares the Laplacian with the gradient along the edges of the grey picture (see
`_sharpness`): independent of the photo's contrast and amount of detail. Sharp photos measure
19-47 over the whole frame at `ANALYSIS_SIDE` (real portraits, scikit-image's samples, drawn
vehicles), the same blurred by a 1-pixel Gaussian at analysis size 5-9, by 2 pixels under 2.5.

Blur and exposure are judged where the subject is (`_subject`: the tiles richest in edges), not
over the whole frame: a studio portrait's white background, a stage's darkness or a background
left out of focus on purpose is not a fault of the photo. The subject's exposure leaves out the
backdrop (`_backdrop`: cells burnt white joined to the frame's edge): a small figure on white
is judged on its own pixels, not on the white around its outline. Measured on the 52 web
portraits of `../shared/vision-real` (docs/vision.md, "The quality check at upload"): 8 refused
over the whole frame, 3 on the subject's tiles, none with the backdrop left out (cross-validated
by person: 3 held out, see there); of their 312 degraded copies 4 brightened ones more pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from PIL import Image, ImageChops, ImageFilter, ImageStat

from runtime.imagemeta import ImageMeta, read_meta
from runtime.validators import near_uniform

#: Longest side the exposure is measured on (pixels): about screen size.
ANALYSIS_SIDE = 1024
#: Longest side the subject's sharpness is judged at (pixels): a web copy enlarged from a smaller
#: original is soft at screen size, a blurred photo still blurred at half of it.
SHARPNESS_SIDE = 512
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
#: The subject (see `_subject`): the tiles of a GRID x GRID grid holding at least SUBJECT_SHARE
#: of the richest tile's edge energy.
GRID = 6
SUBJECT_SHARE = 0.3
#: The backdrop (see `_backdrop`): cells of a CELLS x CELLS grid (each tile cut in 4 x 4)
#: entirely burnt white and joined to the frame's edge through such cells.
CELLS = 4 * GRID
#: A dark or bright frame is too dark or too bright only when its subject is too: a lit person
#: on a dark stage, or on a studio's white, is exposed right.
MIN_SUBJECT_BRIGHTNESS = 60.0
MAX_SUBJECT_BRIGHTNESS = 200.0
MAX_SUBJECT_CLIPPED = 0.2
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
    return _subject(grey).whole_sharpness


@dataclass(frozen=True)
class _Subject:
    """Where the photo's subject is and how it looks: the tiles holding most of the edges."""

    whole_sharpness: float
    sharpness: float
    brightness: float
    clipped: float


def _subject(grey: Image.Image) -> _Subject:
    """The sharpness of the whole frame, and the sharpness, brightness and share of burnt
    pixels of the subject: the tiles of a `GRID` x `GRID` grid whose edge energy is at least
    `SUBJECT_SHARE` of the richest tile's.

    A portrait's background is out of focus on purpose (shallow depth of field) or uniform (a
    studio's white, a dark stage): across the whole frame it pulls the sharpness and the
    exposure away from what the photo shows. The tiles richest in edges are where the subject
    is; a blurred photo is blurred there too, an over- or underexposed one is burnt or dark
    there too."""
    if grey.width < 3 or grey.height < 3:  # no pixel has all its neighbours
        return _Subject(0.0, 0.0, _mean(grey), 0.0)
    gradient = ImageChops.add(_magnitude(grey, _SOBEL_X), _magnitude(grey, _SOBEL_Y))
    laplacian = _magnitude(grey, _LAPLACIAN)
    energy = ImageChops.multiply(gradient, gradient)
    response = ImageChops.multiply(laplacian, gradient)
    inner = grey.crop((1, 1, grey.width - 1, grey.height - 1))
    burnt = inner.point(lambda level: 255 if level >= 250 else 0)

    def means(picture: Image.Image, side: int) -> list[float]:
        """The picture's mean over each cell of a side x side grid, row by row."""
        box = picture.convert("F").resize((side, side), Image.Resampling.BOX)
        return [cast(float, box.getpixel((x, y))) for y in range(side) for x in range(side)]

    tiles = list(zip(means(energy, GRID), means(response, GRID), strict=True))
    whole = 100.0 * _mean(response) / max(4 * _mean(energy), 1e-6)
    richest = max(tile[0] for tile in tiles)
    chosen = [tile[0] >= SUBJECT_SHARE * richest for tile in tiles]
    subject = [tile for tile, keep in zip(tiles, chosen, strict=True) if keep]
    edges = sum(tile[0] for tile in subject)
    # Exposure: the subject's tiles cut in cells, the backdrop's cells left out.
    levels = means(inner, CELLS)
    shares = [share / 255 for share in means(burnt, CELLS)]
    backdrop = _backdrop(shares)
    step = CELLS // GRID
    in_subject = [
        cell
        for cell in range(CELLS * CELLS)
        if chosen[(cell // CELLS // step) * GRID + cell % CELLS // step]
    ]
    # nothing but the backdrop where the edges are: judge the tiles whole
    cells = [cell for cell in in_subject if cell not in backdrop] or in_subject
    return _Subject(
        whole_sharpness=whole,
        sharpness=100.0 * sum(tile[1] for tile in subject) / max(4 * edges, 1e-6),
        brightness=sum(levels[cell] for cell in cells) / len(cells),
        clipped=sum(shares[cell] for cell in cells) / len(cells),
    )


def _backdrop(shares: list[float]) -> set[int]:
    """The cells of the backdrop: entirely burnt white (`shares`: each cell's share of burnt
    pixels, row by row over a `CELLS` x `CELLS` grid) and joined to the frame's edge through
    such cells (a studio's white, a cut-out on white).

    A backdrop burnt white is no overexposure of what stands before it: a small figure on white
    has tiles at its outline that are mostly white, and only the figure's own cells say whether
    it is burnt. A face burnt into a white backdrop (its outline gone with it) is left out with
    the backdrop: such a photo is refused only when the rest of the subject is burnt or bright
    too."""
    white = {cell for cell, share in enumerate(shares) if share >= 0.999}
    edge = [
        cell
        for cell in white
        if cell < CELLS or cell >= CELLS * (CELLS - 1) or cell % CELLS in (0, CELLS - 1)
    ]
    found = set(edge)
    while edge:
        cell = edge.pop()
        row, column = divmod(cell, CELLS)
        for near in (
            cell - CELLS if row > 0 else -1,
            cell + CELLS if row < CELLS - 1 else -1,
            cell - 1 if column > 0 else -1,
            cell + 1 if column < CELLS - 1 else -1,
        ):
            if near in white and near not in found:
                found.add(near)
                edge.append(near)
    return found


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
    subject = _subject(grey)  # where the subject is, how it is exposed
    small = grey.copy()
    small.thumbnail((SHARPNESS_SIDE, SHARPNESS_SIDE), Image.Resampling.BILINEAR)
    sharpness = _subject(small).sharpness
    measures = {
        "sharpness": round(sharpness, 2),
        "frame_sharpness": round(subject.whole_sharpness, 2),
        "brightness": round(brightness, 1),
        "subject_brightness": round(subject.brightness, 1),
        "contrast": round(contrast, 1),
        "clipped": round(clipped, 3),
        "subject_clipped": round(subject.clipped, 3),
        "width": float(width),
        "height": float(height),
    }
    problems: list[QualityProblem] = []
    if min(width, height) < MIN_SIDE:
        problems.append(_problem("too_small"))
    if contrast < MIN_CONTRAST or near_uniform(grey):
        problems.append(_problem("blank"))
    else:
        if brightness < MIN_BRIGHTNESS and subject.brightness < MIN_SUBJECT_BRIGHTNESS:
            problems.append(_problem("too_dark"))
        elif (brightness > MAX_BRIGHTNESS or clipped >= MAX_CLIPPED) and (
            subject.brightness > MAX_SUBJECT_BRIGHTNESS or subject.clipped >= MAX_SUBJECT_CLIPPED
        ):
            problems.append(_problem("too_bright"))
        if sharpness < MIN_SHARPNESS:
            problems.append(_problem("too_blurry"))
    return QualityReport(passed=not problems, problems=problems, measures=measures)
