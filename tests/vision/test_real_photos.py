"""Each analyzer on a few real photographs from `../shared/vision-real/` (labels.json).

The folder lies beside the project (CI lays shared/ beside its clone); it is read in place,
never copied into the repository. The full figures are `benchmarks/bench_vision.py`'s; these
are a few photos per analyzer so that `make test` notices a regression on real photos.
"""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("dlib", reason="the vision extra is not installed")

from benchmarks.vision import real
from runtime.vision import AnalysisSubject, analyze
from runtime.vision.faces import DEFAULT_MAX_DISTANCE, compare
from runtime.vision.pictures import rgb_array

needs_real = pytest.mark.skipif(
    not real.available(),
    reason=f"the real photographs are not at {real.REAL} (shared/vision-real beside the project)",
)

NOW = dt.datetime(2026, 11, 25, tzinfo=dt.UTC)


def photo(file: str) -> bytes:
    return (real.REAL / file).read_bytes()


@pytest.mark.parametrize("plate", ["AYO9034", "NZO6276", "JOG9221"])
@needs_real
def test_plates_read_exactly_with_no_country_and_a_wrong_one_refused(plate: str) -> None:
    """AYO9034 and NZO6276 were read AY09034 / NZ06276 with no country; JOG9221's photo
    also shows a distant PYA2979 that was read instead."""
    data = photo(f"plate/{plate}.jpg")
    read = analyze("plate", AnalysisSubject(data=data))
    assert read is not None and read.valid and read.result == plate
    wrong = analyze(
        "plate",
        AnalysisSubject(data=data, country="BR", declared={"plate": real.wrong_plate(plate)}),
    )
    assert wrong is not None and not wrong.valid


def rows_and_whole(data: bytes) -> tuple[list[object], list[object]]:
    """A photo's plate lines read from the rows `plate_rows` finds, and from the whole photo."""
    from runtime.vision.ocr import read_lines
    from runtime.vision.plates import PLATE_DETECTION_SIDE, PLATE_RECOGNITION_SIDE, plate_rows

    sides = {"detection_side": PLATE_DETECTION_SIDE, "recognition_side": PLATE_RECOGNITION_SIDE}
    return list(read_lines(data, rows=plate_rows, **sides)), list(read_lines(data, **sides))


@pytest.mark.parametrize("plate", ["JQS5683", "ODJ1599"])
@needs_real
def test_the_rows_of_a_plate_filling_the_photo_settle_its_reading(plate: str) -> None:
    """At the consumer's 1600 px, `plate_rows` finds these plates (ODJ1599's photo also shows
    a dealer's name over the plate) in a band of under half the photo, and the band's
    lines settle the reading: the whole photo is not read, and the plate is read exactly, with
    and without its country and declared."""
    from runtime.vision.pictures import rgb_array
    from runtime.vision.plates import PLATE_RECOGNITION_SIDE, compare_plate, plate_lines, plate_rows

    data = real.resized(photo(f"plate/{plate}.jpg"), 1600)
    pixels = rgb_array(data, PLATE_RECOGNITION_SIDE)
    band = plate_rows(pixels)
    assert band is not None and band[1] - band[0] < pixels.shape[0] / 2
    rows, whole = rows_and_whole(data)
    plate_line = next(line for line in whole if plate[:3] in line.text.replace(" ", ""))
    assert band[0] <= plate_line.top and plate_line.bottom <= band[1]
    for country, declared in ((None, None), ("BR", None), ("BR", plate)):
        lines = plate_lines(data, country, declared)
        assert lines == rows
        outcome = compare_plate(lines, country, declared)
        assert outcome.valid and outcome.result == plate


@pytest.mark.parametrize("plate", ["MXQ1601", "AYO9034"])
@needs_real
def test_a_plate_its_rows_do_not_settle_is_read_from_the_whole_photo(plate: str) -> None:
    """At 1600 px, these plates' rows read them unsure (MXQ1601) or not at all: the whole photo
    is read, and the plate exactly. A wrong declared plate is never settled by the rows."""
    from runtime.vision.plates import _sure, compare_plate, plate_lines

    data = real.resized(photo(f"plate/{plate}.jpg"), 1600)
    rows, whole = rows_and_whole(data)
    assert not _sure(rows, None, None)  # type: ignore[arg-type]
    lines = plate_lines(data, None, None)
    assert lines == whole
    assert compare_plate(lines, None, None).result == plate
    wrong = real.wrong_plate(plate)
    assert plate_lines(data, "BR", wrong) == whole
    assert not compare_plate(lines, "BR", wrong).valid


@pytest.mark.parametrize("file", ["face/angelina_jolie__img1.jpg", "face/katy_perry__img26.jpg"])
@needs_real
def test_no_rows_are_found_in_a_portrait_with_no_text(file: str) -> None:
    """`plate_rows` on real portraits with no text: no band, so no line is read from rows, and
    the plate analyzer finds no plate (from the whole photo)."""
    from runtime.vision.pictures import rgb_array
    from runtime.vision.plates import PLATE_RECOGNITION_SIDE, plate_rows

    data = real.resized(photo(file), 1600)
    assert plate_rows(rgb_array(data, PLATE_RECOGNITION_SIDE)) is None
    assert rows_and_whole(data)[0] == []
    outcome = analyze("plate", AnalysisSubject(data=data, country="AR"))
    assert outcome is not None and not outcome.valid


def test_registry_plates_of_argentina_the_czech_republic_and_vietnam() -> None:
    """The ALPR packages' own test photos (`make vision-data` extracts them), each read exactly
    with no country (20 of 20 when the held-out figures were taken) and one character off
    refused."""
    from benchmarks.vision import registry_photos

    found = registry_photos.present(kind="plate")
    if not found:
        pytest.fail(
            f"the registry photos are missing from {registry_photos.FOLDER}: run `make vision-data`"
        )
    for photo in found:
        data, truth = (registry_photos.FOLDER / photo["file"]).read_bytes(), photo["truth"]["text"]
        outcome = analyze("plate", AnalysisSubject(data=data))
        assert outcome is not None and outcome.valid, photo["file"]
        assert outcome.result == truth
        wrong = analyze(
            "plate", AnalysisSubject(data=data, declared={"plate": real.wrong_plate(truth)})
        )
        assert wrong is not None and not wrong.valid, photo["file"]


@pytest.mark.parametrize(
    ("file", "color"),
    [("color/us_car13.jpg", "blue"), ("color/us_car5.jpg", "red"), ("plate/NTV0498.jpg", "yellow")],
)
@needs_real
def test_body_colors_of_real_cars(file: str, color: str) -> None:
    outcome = analyze("color", AnalysisSubject(data=photo(file), declared={"color": color}))
    assert outcome is not None and outcome.valid and outcome.result == color
    other = analyze("color", AnalysisSubject(data=photo(file), declared={"color": "green"}))
    assert other is not None and not other.valid


@pytest.mark.parametrize(
    ("file", "exposure"),
    [("color/us_car16.jpg", 0.15), ("color/us_car16.jpg", 0.08), ("color/us_us10.jpg", 0.08)],
)
@needs_real
def test_a_dark_red_body_read_as_a_shade_is_not_confidently_refused(
    file: str, exposure: float
) -> None:
    """Issue 37: the held-out set's dark red cars read grey or black and "red" was refused at
    confidence 0-1. The shared set's red cars under a dim light (`real.dimmed`) read grey too;
    their paint's chroma stays clearly above a grey's in CIELAB, so the refusal is unsure
    (inside the review band, a person decides) and the reviewer reads "between grey and red"."""
    from runtime.vision import color

    data = real.dimmed(photo(file), exposure)
    picture = rgb_array(data, color.ANALYSIS_SIDE)
    scores = color.color_scores(picture)
    assert max(scores, key=lambda name: scores[name]) in color.SHADES  # the failure: read a shade
    assert color.pass_confidence(scores, "red") < 10  # as it was: a confident refusal
    outcome = analyze("color", AnalysisSubject(data=data, declared={"color": "rojo"}))
    assert outcome is not None and not outcome.valid
    assert 100 - color.SHADE_CEILING <= outcome.confidence < 50
    assert outcome.seen is not None and outcome.seen["colors"][1] == "red"
    assert outcome.seen["colorless"] is False


@pytest.mark.parametrize(
    ("file", "exposure"),
    [
        ("color/us_car7.jpg", 1.0),  # grey, red its second color (tail lights, a red car near)
        ("plate/JST2699.jpg", 0.15),  # grey, dimmed
        ("plate/NZF0384.jpg", 1.0),  # black, red its second color
        ("plate/HPM9362.jpg", 0.3),  # black
    ],
)
@needs_real
def test_a_grey_or_black_body_still_refuses_red_confidently(file: str, exposure: float) -> None:
    """The dark-paint rule keeps coverage: a shade body's few reddish pixels (under a third of
    its weight) are no evidence of a red body, dimmed or not."""
    from runtime.vision import color

    data = real.dimmed(photo(file), exposure)
    assert color.hue_evidence(rgb_array(data, color.ANALYSIS_SIDE))["red"] < 0.25
    outcome = analyze("color", AnalysisSubject(data=data, declared={"color": "red"}))
    assert outcome is not None and not outcome.valid and outcome.confidence < 5


@needs_real
def test_dimmed_shared_bodies_before_and_after_the_dark_paint_rule() -> None:
    """`real.colors_dimmed`: no right refusal is lost (360/360), and fewer true colors are
    refused (7/15 before, 4/15 after: a dimmed yellow reads gold, which the rule leaves alone,
    and one red car dimmed to 0.08 shows its paint on under a third of its weight)."""
    dimmed = real.colors_dimmed()
    wrong = dimmed["shade_body_colored_declaration_refused"]
    assert wrong["before"] == wrong["after"] == "360/360"
    true = dimmed["true_color_refused"]
    assert real_rate(true["after"]) < real_rate(true["before"]), true


@needs_real
def test_real_body_colors_no_worse_than_measured() -> None:
    """Issue 23's target is 90% exact (23/25); measured 18/25, every miss a white, silver or
    black body (docs/vision.md). A floor, not the target: a change that loses one fails here,
    and one that reaches the target should raise it."""
    measured = real.colors()
    assert real_rate(measured["exact"]) >= 18 / 25, measured["failures"]
    hits, photos = (int(part) for part in measured["wrong_color_accepted"].split("/"))
    assert hits <= 7 and photos == 200


@needs_real
def test_real_body_colors_decided_or_deferred_cross_validated() -> None:
    """Issue 37's target on the real photos, each judged by a shade ceiling and review band
    fitted without it: wrong at most 1% of decided, at least 60% decided (0/160 and 160/225
    measured; 0/163 and 163/225 without the dark-paint rule, which defers three refusals of a
    grey car whose warm hues cover a third of its body)."""
    selective = real.colors_selective()
    assert selective["cases"] == 225
    assert real_rate(selective["wrong_among_decided"]) <= 0.01, selective
    assert real_rate(selective["decided"]) >= 0.6, selective


def real_rate(text: str) -> float:
    hits, total = (int(part) for part in text.split("/"))
    return hits / total


@needs_real
def test_a_holder_born_in_1911_is_not_read_as_born_in_2011() -> None:
    """The Czech specimen's MRZ says 110101; the passport prints 01.01.1911."""
    data = photo("document/100_pass-cze.jpg")
    born = analyze("birthdate", AnalysisSubject(data=data, declared={"birthdate": "1911-01-01"}))
    assert born is not None and born.valid and born.result == "1911-01-01"
    age = analyze("age", AnalysisSubject(data=data, now=NOW))
    assert age is not None and age.result == 115


@needs_real
def test_the_taiwanese_holder_is_deferred_not_refused_on_a_name_misread() -> None:
    """Issue 37: the passport's MRZ name row comes out `<NN<<M<H<<<...` (letters at 0.42 to
    0.52) and its printed name in Chinese characters: its true holder was refused at 0 on
    `full_name`. A name the machine cannot read is a person's to judge (`UNSURE`), and no
    other person's name is accepted."""
    from runtime.vision.codes import UNSURE

    data = photo("document/100_pass-chn.jpg")
    for declared in (
        {"firstName": "Mei Hua", "lastName": "Lin"},
        {"firstName": "Maria", "lastName": "Gonzalez"},
    ):
        outcome = analyze("full_name", AnalysisSubject(data=data, declared=declared))
        assert outcome is not None and not outcome.valid and outcome.confidence == UNSURE


@needs_real
def test_a_photographed_code_is_read_as_printed() -> None:
    """The shared set labels `plate/FZB9581.jpg` FZB9581 (its file's name); the plate reads
    FBZ-9581 (`real.LABEL_CORRECTIONS`), which the serial analyzer accepts, and the code one
    character off is refused."""
    data = photo("plate/FZB9581.jpg")
    right = analyze(
        "serialNumber", AnalysisSubject(data=data, declared={"serialNumber": "FBZ9581"})
    )
    assert right is not None and right.valid
    wrong = analyze(
        "serialNumber", AnalysisSubject(data=data, declared={"serialNumber": "FBZ9584"})
    )
    assert wrong is not None and not wrong.valid and wrong.confidence < 5


@needs_real
def test_an_icelandic_name_matches_its_mrz_transliteration() -> None:
    """The MRZ spells ÆVARSDÓTTIR<<ÞURÍÐUR<ÖSP as AEVARSDOTTIR<<THURIDUR<OESP."""
    data = photo("document/100_pass-isl.png")
    declared = {"firstName": "Þuríður Ösp", "lastName": "Ævarsdóttir"}
    outcome = analyze("full_name", AnalysisSubject(data=data, declared=declared))
    assert outcome is not None and outcome.valid, outcome
    other = analyze(
        "full_name",
        AnalysisSubject(data=data, declared={"firstName": "Þuríður", "lastName": "Ævarsdóttir"}),
    )
    assert other is not None and not other.valid


@needs_real
def test_faces_same_person_accepted_a_passport_portrait_of_another_refused() -> None:
    same = compare(
        photo("face/matt_damon__img29.jpg"),
        photo("face/matt_damon__img30.jpg"),
        DEFAULT_MAX_DISTANCE,
    )
    assert same.valid, same
    for document in ("document/100_pass-fin.png", "document/100_pass-hrv.jpg"):
        other = compare(
            photo("face/angelina_jolie__img1.jpg"), photo(document), DEFAULT_MAX_DISTANCE
        )
        assert not other.valid and isinstance(other.result, float), other


@needs_real
def test_no_good_real_photo_refused_for_blur_or_exposure() -> None:
    """The vehicles, documents and genuine photos of the set (phone photos and scans)."""
    from runtime.vision.quality import assess

    refused = []
    for kind in ("plate", "color", "document"):
        for entry in real.entries(kind):
            problems = {p.code for p in assess(entry.data()).problems}
            if problems & {"too_blurry", "too_dark", "too_bright"}:
                refused.append((entry.file, problems))
    assert refused == []


@needs_real
def test_studio_portraits_judged_where_the_subject_is() -> None:
    """The 52 web portraits (white studio backgrounds, dark stages, shallow focus): the whole
    frame's blur and exposure refused 8; judged on the tiles holding the subject, three small
    figures on white were still refused (the tiles at their outline are mostly burnt white);
    with the backdrop (burnt white cells joined to the frame's edge) left out of the subject's
    exposure, none is. Cross-validated by person in docs/vision.md. The same portraits out of
    focus, dark or blank are all refused; the figures on white burnt at 3.5 times the light
    too."""
    import io

    from PIL import Image, ImageEnhance, ImageFilter

    from runtime.vision.quality import ANALYSIS_SIDE, assess

    refused = {}
    for entry in real.entries("face"):
        problems = {p.code for p in assess(entry.data()).problems}
        if problems & {"too_blurry", "too_dark", "too_bright"}:
            refused[entry.file] = problems
    assert refused == {}
    formerly_refused = [
        "face/elon_musk__img18.jpg",  # a soft, enlarged web copy
        "face/angelina_jolie__img6.jpg",
        "face/matt_damon__img33.jpg",
        "face/george_clooney__img38.jpg",  # a crowd out of focus behind him
        "face/mark_zuckerberg__img57.jpg",  # a lit figure on a dark stage
    ]
    on_white = [f"face/mark_zuckerberg__img{n}.jpg" for n in (13, 14, 15)]
    for file in formerly_refused + on_white:
        picture = Image.open(real.REAL / file).convert("RGB")
        scale = max(picture.size) / ANALYSIS_SIDE
        changes = [
            (picture.filter(ImageFilter.GaussianBlur(2 * max(scale, 1))), {"too_blurry"}),
            (ImageEnhance.Brightness(picture).enhance(0.15), {"too_dark", "blank"}),
        ]
        if file in on_white:
            changes.append((ImageEnhance.Brightness(picture).enhance(3.5), {"too_bright"}))
        for changed, codes in changes:
            buffer = io.BytesIO()
            changed.save(buffer, "JPEG", quality=90)
            problems = {p.code for p in assess(buffer.getvalue()).problems}
            assert problems & codes, (file, problems)
