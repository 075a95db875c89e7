"""`color`: the vehicle's body color, in the clients' nine words, against the declared one.

The photo is looked at small (160 px). What is body and what is background:
- the vehicle is near the middle: pixels weigh by a Gaussian centred on the photo;
- the background touches the photo's edges: colors frequent in a border strip (sky, road, grass,
  a wall) weigh little in the middle too (unless the vehicle fills the frame and the border is
  the vehicle itself: then nothing is excluded);
- glass, tyres, shadows and highlights are colorless, while paint is often colored: colored
  pixels weigh `CHROMATIC_BOOST` times more.
Colored pixels vote for a hue family (red, orange, yellow, gold, green, blue); colorless ones are
pooled and named white, grey or black by an upper quantile of their brightness relative to the
photo's highlights (glass and tyres are dark on every vehicle; exposure varies).
A colored declaration refused because the body reads as a shade is looked at again in CIELAB
(`hue_evidence`): a dark or dimly lit paint whose chroma stands clearly above a grey's, given the
light's and the sensor's uncertainty, is evidence of its hue, not of grey or black, and such a
refusal is unsure (a person decides) rather than confident.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any, ClassVar

from runtime.validators import ValidationOutcome
from runtime.vision import AnalysisSubject, register
from runtime.vision.pictures import UnreadablePhoto, rgb_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: The clients' vocabulary, exactly.
COLORS = ("yellow", "blue", "white", "gold", "grey", "orange", "black", "red", "green")
#: Other words clients declare (Spanish, Portuguese, American English, paint names).
ALIASES: dict[str, str] = {
    **{color: color for color in COLORS},
    "gray": "grey",
    "silver": "grey",
    "amarillo": "yellow",
    "amarilla": "yellow",
    "amarelo": "yellow",
    "amarela": "yellow",
    "azul": "blue",
    "celeste": "blue",
    "blanco": "white",
    "blanca": "white",
    "branco": "white",
    "branca": "white",
    "dorado": "gold",
    "dorada": "gold",
    "dourado": "gold",
    "dourada": "gold",
    "oro": "gold",
    "ouro": "gold",
    "gris": "grey",
    "plata": "grey",
    "plateado": "grey",
    "plateada": "grey",
    "prata": "grey",
    "prateado": "grey",
    "prateada": "grey",
    "cinza": "grey",
    "cinzento": "grey",
    "naranja": "orange",
    "anaranjado": "orange",
    "laranja": "orange",
    "negro": "black",
    "negra": "black",
    "preto": "black",
    "preta": "black",
    "rojo": "red",
    "roja": "red",
    "vermelho": "red",
    "vermelha": "red",
    "bordo": "red",
    "granate": "red",
    "verde": "green",
}

#: Longest side the photo is analysed at.
ANALYSIS_SIDE = 160
#: Colored pixels' weight relative to colorless ones: glass, tyres, trim and shadows are
#: colorless on every vehicle, so a body is colored once a third of its pixels are.
CHROMATIC_BOOST = 2.0
#: A pixel is colored when its saturation and its chroma (max - min, 0-1) reach these.
MIN_SATURATION = 0.22
MIN_CHROMA = 0.12
#: Width of the border strip that shows the background (fraction of each side).
BORDER = 0.08
#: A color (RGB quantized to 8 levels per channel) covering this share of the border is
#: background; its pixels in the middle lose their weight.
BACKGROUND_SHARE = 0.02
#: Colorless bodies are named by the weighted `BODY_QUANTILE` of their brightness (the dark glass
#: and tyres sit under it), relative to the photo's own highlights (its 99th percentile, at least
#: `MIN_REFERENCE`) so that an underexposed white body stays white; then these boundaries (0-1)
#: between black / grey / white, and the softness that lowers the confidence near one.
BODY_QUANTILE = 0.75
MIN_REFERENCE = 0.5
BLACK_UNDER = 0.42
WHITE_OVER = 0.85
BRIGHTNESS_SOFTNESS = 0.03
#: Margin (declared color's score against the best other, relative) giving confidence 95 / 5.
MARGIN_SCALE = 0.1


def canonical(word: Any) -> str | None:
    """The vocabulary color a declared word means ("Prateado" -> grey), or None."""
    if not isinstance(word, str):
        return None
    plain = unicodedata.normalize("NFKD", word.casefold())
    plain = "".join(char for char in plain if not unicodedata.combining(char))
    for token in plain.replace("-", " ").replace("/", " ").split():
        if token in ALIASES:
            return ALIASES[token]
    return None


def _hsv(pixels: npt.NDArray[np.float64]) -> tuple[Any, Any, Any, Any]:
    """Hue (degrees), saturation, value and chroma of RGB pixels in 0-1."""
    import numpy as np

    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    value = pixels.max(axis=-1)
    chroma = value - pixels.min(axis=-1)
    safe = np.where(chroma > 0, chroma, 1.0)
    hue = np.where(
        value == red,
        ((green - blue) / safe) % 6,
        np.where(value == green, (blue - red) / safe + 2, (red - green) / safe + 4),
    )
    saturation = np.where(value > 0, chroma / np.where(value > 0, value, 1.0), 0.0)
    return hue * 60.0, saturation, value, chroma


def _weights(picture: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Each pixel's weight as vehicle body: central, and not of the border's colors."""
    import numpy as np

    height, width = picture.shape[:2]
    ys = (np.arange(height) - (height - 1) / 2) / (0.3 * height)
    xs = (np.arange(width) - (width - 1) / 2) / (0.35 * width)
    central: npt.NDArray[np.float64] = np.exp(-0.5 * (ys[:, None] ** 2 + xs[None, :] ** 2))
    bins = (
        (picture[..., 0] // 32).astype(np.int64) * 64
        + (picture[..., 1] // 32).astype(np.int64) * 8
        + (picture[..., 2] // 32).astype(np.int64)
    )
    strip_y, strip_x = max(1, round(BORDER * height)), max(1, round(BORDER * width))
    border = np.zeros((height, width), dtype=bool)
    border[:strip_y, :] = border[-strip_y:, :] = True
    border[:, :strip_x] = border[:, -strip_x:] = True
    share = np.bincount(bins[border], minlength=512) / border.sum()
    foreground = np.clip(1.0 - share[bins] / BACKGROUND_SHARE, 0.0, 1.0)
    weights: npt.NDArray[np.float64] = central * foreground
    if weights.sum() < 0.15 * central.sum():  # the vehicle fills the frame: its edges too
        return central
    return weights


def _sigmoid(x: float) -> float:
    import math

    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def color_scores(
    picture: npt.NDArray[np.uint8],
    *,
    body_quantile: float = BODY_QUANTILE,
    black_under: float = BLACK_UNDER,
    white_over: float = WHITE_OVER,
    weights: npt.NDArray[np.float64] | None = None,
) -> dict[str, float]:
    """Each vocabulary color's weight as the body's color (they add up to 1). The colorless
    naming's boundaries, and each pixel's weight as body (`_weights` when None), are
    parameters so that the benchmark can cross-validate them and try other ways of finding
    the vehicle."""
    import numpy as np

    if weights is None:
        weights = _weights(picture)
    hue, saturation, value, chroma = _hsv(picture.astype(np.float64) / 255.0)
    colored = (saturation >= MIN_SATURATION) & (chroma >= MIN_CHROMA) & (value >= 0.2)
    # Hue families of colored pixels. Gold is the desaturated or dark yellow-orange of metallic
    # paint; yellow and orange are the saturated ones.
    warm = (hue >= 18) & (hue < 70)
    gold = warm & ((saturation < 0.6) | ((hue >= 38) & (value < 0.6)))
    families = {
        "red": (hue < 18) | (hue >= 330),
        "orange": warm & ~gold & (hue < 42),
        "yellow": warm & ~gold & (hue >= 42),
        "gold": gold,
        "green": (hue >= 70) & (hue < 170),
        "blue": (hue >= 170) & (hue < 260),
        # Purple is not in the vocabulary: its redder half votes red, the bluer half blue.
    }
    families["red"] = families["red"] | ((hue >= 295) & (hue < 330))
    families["blue"] = families["blue"] | ((hue >= 260) & (hue < 295))
    scores = {color: 0.0 for color in COLORS}
    for color, members in families.items():
        scores[color] = float(CHROMATIC_BOOST * weights[colored & members].sum())
    colorless = ~colored
    mass = float(weights[colorless].sum())
    if mass > 0:
        values = value[colorless]
        order = np.argsort(values)
        cumulative = np.cumsum(weights[colorless][order])
        at = min(len(values) - 1, int(np.searchsorted(cumulative, cumulative[-1] * body_quantile)))
        reference = max(float(np.percentile(value, 99)), MIN_REFERENCE)
        body = float(values[order][at]) / reference
        white = _sigmoid((body - white_over) / BRIGHTNESS_SOFTNESS)
        black = _sigmoid((black_under - body) / BRIGHTNESS_SOFTNESS)
        scores["white"] = mass * white
        scores["black"] = mass * black
        scores["grey"] = mass * max(0.0, 1.0 - white - black)
    total = sum(scores.values()) or 1.0
    return {color: score / total for color, score in scores.items()}


#: The colorless shades: which of them a body is depends on light more than on paint.
SHADES = frozenset({"white", "grey", "black"})
#: Highest confidence (and 100 minus the lowest) when a shade is declared and the body reads
#: as a shade (white in shade or grey, silver in sun or white, black with reflections or grey):
#: the share of shade bodies read as a shade that the real photos' reads got right (13 of 20 on
#: `../shared/vision-real`, rounded down to a multiple of 5; `benchmarks/vision/real.py`
#: `colors_selective` refits it without each photo). A template's `review below confidence`
#: above it sends every such case to a person; one at or under it decides them as before.
SHADE_CEILING = 65.0


#: Evidence of a hue that the colorless pool hides. A dark or dimly lit paint (a dark red in a
#: car park) fails the saturation and chroma tests above and is pooled as grey or black, yet in
#: CIELAB its chroma stays clearly above a grey's. Each pixel's uncertainty in the a*b* plane is
#: propagated from an unknown illuminant (each channel's linear gain off by `CAST`) and from
#: sensor and JPEG noise (`NOISE`, 0-1, on each channel): physical priors, not fitted to photos.
#: A pixel is evidence of a hue when its chroma exceeds `SIGNIFICANCE` times that uncertainty and
#: its hue angle lies in the hue's range (`LAB_HUES`) widened by the angle the uncertainty spans
#: at its chroma (wide in dark, weakly colored pixels; narrow in saturated ones).
CAST = 0.1
NOISE = 3 / 255
SIGNIFICANCE = 2.0
#: CIELAB hue angle ranges (degrees, from - to, counterclockwise) of the hue families above: the
#: Lab hues of the HSV boundaries (18, 42, 70, 170, 295 degrees) at full saturation; gold is the
#: warm range (orange to yellow) at any chroma.
LAB_HUES: dict[str, tuple[float, float]] = {
    "red": (325.0, 47.0),
    "orange": (47.0, 78.0),
    "yellow": (78.0, 113.0),
    "gold": (47.0, 113.0),
    "green": (113.0, 174.0),
    "blue": (174.0, 325.0),
}
#: A refusal of a colored declaration whose body reads as a shade is unsure when at least this
#: share of the body's weight is evidence of the declared hue: the share at which, counted
#: colored (`CHROMATIC_BOOST`), those pixels would tie the colorless rest. Derived, not fitted:
#: chosen left one photo out on the shared set and the registry's tuning cars
#: (`benchmarks/vision/real.py` `colors_hue_share`), a share rests on one pale green car and
#: decides nothing better on the photo left out, so the third stays (docs/vision.md).
HUE_EVIDENCE = 1.0 / (1.0 + CHROMATIC_BOOST)


def _lab(xyz: npt.NDArray[np.float64]) -> tuple[Any, Any]:
    """CIELAB a*, b* of XYZ colors relative to the D65 white (`_SRGB_TO_XYZ_D65`)."""
    import numpy as np

    cube = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return 500.0 * (cube[..., 0] - cube[..., 1]), 200.0 * (cube[..., 1] - cube[..., 2])


def _linear(pixels: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Linear light of sRGB values in 0-1."""
    import numpy as np

    linear: npt.NDArray[np.float64] = np.where(
        pixels <= 0.04045, pixels / 12.92, ((pixels + 0.055) / 1.055) ** 2.4
    )
    return linear


#: sRGB (linear) to XYZ, each row divided by the D65 white's X, Y, Z.
_SRGB_TO_XYZ_D65 = (
    (0.4124 / 0.95047, 0.3576 / 0.95047, 0.1805 / 0.95047),
    (0.2126, 0.7152, 0.0722),
    (0.0193 / 1.08883, 0.1192 / 1.08883, 0.9505 / 1.08883),
)


def hue_evidence(
    picture: npt.NDArray[np.uint8], weights: npt.NDArray[np.float64] | None = None
) -> dict[str, float]:
    """Each colored vocabulary color's share of the body's weight (`_weights` when None) that is
    evidence of its hue in CIELAB (see `CAST`): what a refusal of that color has to explain."""
    import numpy as np

    if weights is None:
        weights = _weights(picture)
    pixels = picture.astype(np.float64) / 255.0
    linear = _linear(pixels)
    matrix = np.array(_SRGB_TO_XYZ_D65)
    xyz = linear @ matrix.T
    a, b = _lab(xyz)
    variance = np.zeros(a.shape)
    for channel in range(3):
        # One channel moved moves XYZ along that channel's column: the light's gain (clipped
        # at full scale, as a camera does), then the sensor's noise.
        lit = np.minimum(linear[..., channel] * (1.0 + CAST), 1.0)
        noisy = _linear(np.minimum(pixels[..., channel] + NOISE, 1.0))
        for moved in (lit, noisy):
            moved_a, moved_b = _lab(
                xyz + (moved - linear[..., channel])[..., None] * matrix[:, channel]
            )
            variance += (moved_a - a) ** 2 + (moved_b - b) ** 2
    spread = SIGNIFICANCE * np.sqrt(variance)
    chroma = np.hypot(a, b)
    hue = np.degrees(np.arctan2(b, a)) % 360.0
    significant = chroma > spread
    widening = np.degrees(np.arcsin(np.clip(spread / np.maximum(chroma, 1e-9), 0.0, 1.0)))
    total = float(weights.sum()) or 1.0
    evidence = {}
    for color, (start, end) in LAB_HUES.items():
        width = (end - start) % 360.0
        off = np.abs((hue - (start + width / 2) + 180.0) % 360.0 - 180.0)
        members = significant & (off <= width / 2 + widening)
        evidence[color] = float(weights[members].sum()) / total
    return evidence


#: A colored reading is only as sure as its share of the body's score: a yellow plate filling a
#: close-up, tail lights on a white car or the sky in a silver car's paint lead the scores with
#: a third to a half of them, a colored body's own paint with 0.6 or more. When the leading color
#: is a colored one under `LEAD_SHARE`, its acceptance and the refusal of every color holding at
#: least `OWN_SHARE` of the scores (the shades together for a shade) are unsure: confidence
#: between `100 - SHADE_CEILING` and `SHADE_CEILING`, a person decides. Both chosen left one
#: photo out on the shared set's 25 bodies and the registry's 16 tuning cars
#: (`benchmarks/vision/real.py` `colors_lead_share`; docs/vision.md "A colored reading's share").
LEAD_SHARE = 0.5625
OWN_SHARE = 0.1


def weak_lead(
    scores: dict[str, float],
    declared: str,
    lead_share: float = LEAD_SHARE,
    own_share: float = OWN_SHARE,
) -> bool:
    """Whether the body's leading color is a colored one under `lead_share` of the scores and
    `declared` is it or holds at least `own_share` of them (the shades' sum for a shade)."""
    lead = max(scores, key=lambda color: scores[color])
    if lead in SHADES or scores[lead] >= lead_share:
        return False
    own = sum(scores[shade] for shade in SHADES) if declared in SHADES else scores[declared]
    return declared == lead or own >= own_share


def contest(scores: dict[str, float], declared: str) -> str:
    """The color `declared` is measured against: the best other one."""
    return max((color for color in scores if color != declared), key=lambda c: scores[c])


def pass_confidence(
    scores: dict[str, float],
    declared: str,
    *,
    shade_ceiling: float = SHADE_CEILING,
    evidence: dict[str, float] | None = None,
    hue_share: float = HUE_EVIDENCE,
    lead_share: float = LEAD_SHARE,
    own_share: float = OWN_SHARE,
) -> float:
    """0-100 confidence that the body is `declared`: 50 when it ties with the best other color,
    >= 95 when it leads by 30% of its score, <= 5 when another leads it by as much; between
    `100 - shade_ceiling` and `shade_ceiling` when a shade is declared and the body reads as
    a shade (which one, this analyzer cannot tell on real photos: see `SHADE_CEILING`).
    A colored declaration refused because the body reads as a shade is not refused under
    `100 - shade_ceiling` when the body's `evidence` (`hue_evidence`) of its hue reaches
    `hue_share` (`HUE_EVIDENCE`): a dark paint of that hue is not evidence of grey or black.
    A weak colored lead (`weak_lead`: under `lead_share`) leaves it between those two too."""
    mine = scores[declared]
    rival = contest(scores, declared)
    best_other = scores[rival]
    margin = (mine - best_other) / max(mine, best_other, 1e-9)
    confidence = 100.0 * _sigmoid(margin / MARGIN_SCALE)
    best = declared if mine >= best_other else rival
    if (declared in SHADES and best in SHADES) or weak_lead(
        scores, declared, lead_share, own_share
    ):
        confidence = min(shade_ceiling, max(100.0 - shade_ceiling, confidence))
    elif hidden_hue(scores, declared, evidence, hue_share):
        confidence = max(100.0 - shade_ceiling, confidence)
    return confidence


def loses_to_a_shade(scores: dict[str, float], declared: str) -> bool:
    """Whether a colored `declared` is refused because the body reads as a shade."""
    if declared in SHADES:
        return False
    rival = contest(scores, declared)
    return rival in SHADES and scores[declared] < scores[rival]


def hidden_hue(
    scores: dict[str, float],
    declared: str,
    evidence: dict[str, float] | None,
    hue_share: float = HUE_EVIDENCE,
) -> bool:
    """Whether `declared` (a colored color) loses to a shade while the body's CIELAB evidence
    of its hue reaches `hue_share` (`HUE_EVIDENCE`): the shade may be the light's, not the
    paint's."""
    return (
        evidence is not None
        and loses_to_a_shade(scores, declared)
        and evidence.get(declared, 0.0) >= hue_share
    )


@register
class ColorAnalyzer:
    """The vehicle's body color against `declared["color"]` (car, moto, machinery)."""

    name: ClassVar[str] = "color"
    needs: ClassVar[frozenset[str]] = frozenset()

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        try:
            picture = rgb_array(subject.data, ANALYSIS_SIDE)
        except UnreadablePhoto:
            return ValidationOutcome(confidence=0.0, valid=False, result="unreadable photo")
        weights = _weights(picture)
        scores = color_scores(picture, weights=weights)
        found = max(scores, key=lambda color: scores[color])
        declared = canonical(subject.declared.get("color"))
        if declared is None:  # nothing (or no known color) to compare with
            return ValidationOutcome(confidence=0.0, valid=False, result=found)
        # The hue evidence costs 5 times the scores: only a refusal against a shade reads it.
        evidence = hue_evidence(picture, weights) if loses_to_a_shade(scores, declared) else None
        confidence = pass_confidence(scores, declared, evidence=evidence)
        second = max((color for color in COLORS if color != found), key=lambda c: scores[c])
        if hidden_hue(scores, declared, evidence):  # the reviewer reads "between black and red"
            second = declared
        seen = {"kind": "color", "colors": [found, second], "colorless": {found, second} <= SHADES}
        return ValidationOutcome(
            confidence=confidence, valid=confidence >= 50, result=found, seen=seen
        )
