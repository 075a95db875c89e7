"""The OCR analyzers: plates, serials and identity documents.

Unit tests (normalization, plate formats, MRZ parsing and check digits, the confidence
convention) need no model; the tests marked `model` run the real RapidOCR on a few photos drawn
here, the same way the benchmark draws them.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import io
import string
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.vision import AnalysisSubject, ValidationOutcome
from runtime.vision.codes import decide, normalize_code, same_code, shape_key
from runtime.vision.machine_readable_zone import check_digit, find_zone, parse_td1
from runtime.vision.ocr import TextLine
from runtime.vision.plates import coerce, compare_plate
from runtime.vision.serials import compare_serial

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def line(text: str, top: float = 0.0, confidence: float = 0.95, left: float = 0.0) -> TextLine:
    """An OCR line as the engine would give it (20 px high, 300 px wide)."""
    box = ((left, top), (left + 300, top), (left + 300, top + 20), (left, top + 20))
    return TextLine(text, confidence, box)


# --- codes and plates, no model -------------------------------------------------------------


@given(st.text(max_size=30))
def test_normalize_code_is_idempotent(text: str) -> None:
    once = normalize_code(text)
    assert normalize_code(once) == once
    assert shape_key(shape_key(text)) == shape_key(text)


def test_normalize_code_drops_case_spaces_dashes_dots_accents() -> None:
    assert normalize_code(" ab-123.cd ") == "AB123CD"
    assert normalize_code("Ñandú 12") == "NANDU12"


@given(st.floats(min_value=-2, max_value=3, allow_nan=False))
def test_confidence_agrees_with_valid(score: float) -> None:
    confidence, valid = decide(score)
    assert 0 <= confidence <= 100
    assert valid == (confidence >= 50)


def test_confidence_is_steep() -> None:
    assert decide(0.9)[0] >= 95 and decide(0.1)[0] <= 5


def test_coerce_resolves_look_alikes_by_position() -> None:
    assert coerce("A8I23CO", "LLDDDLL") == ("AB123CO", 2)
    assert coerce("ABC1D23", "LLLDLDD") == ("ABC1D23", 0)
    assert coerce("A8C1023", "LLLDLDD") == ("ABC1O23", 2)  # a declared D still matches it
    assert coerce("ABCDEF", "LLLDDD") is None  # E cannot be a digit


def test_plate_read_from_a_mercosur_plate_with_look_alikes() -> None:
    lines = [line("DNI", 0), line("A8 I23 CD", 25)]
    outcome = compare_plate(lines, "AR", "ab-123-cd")
    assert outcome.valid and outcome.result == "AB123CD" and outcome.confidence >= 95


def test_a_plate_differing_by_one_real_character_is_refused() -> None:
    outcome = compare_plate([line("AB 123 CD")], "AR", "AB124CD")
    assert not outcome.valid and outcome.confidence <= 5
    assert outcome.result == "AB123CD"


def test_nothing_declared_valid_when_a_plausible_plate_is_read() -> None:
    assert compare_plate([line("ABC 123")], "AR", None).valid
    assert not compare_plate([line("COFFEE")], "AR", None).valid
    assert compare_plate([line("7KQ 4521")], None, None).result == "7KQ4521"


def test_the_plate_rows_settle_only_a_sure_plate_of_a_known_format() -> None:
    """`plates._sure`: the lines of the plate's rows settle the reading only with a plate
    fitting a known format read at `QUICK_SURE` or more, and with a declared plate, only that
    one; otherwise the whole photo is read."""
    from runtime.vision.plates import QUICK_SURE, _sure

    assert _sure([line("AB 123 CD")], None, None)
    assert _sure([line("AB 123 CD")], "AR", "ab-123-cd")
    assert not _sure([line("AB 123 CD")], "AR", "AB 128 CD")  # another plate: read all
    assert not _sure([line("AB 123 CD", confidence=QUICK_SURE - 0.05)], None, None)
    # `AB123C` fits no format (a group cut off): the generic rule reads it, unsure.
    assert compare_plate([line("AB 123 C")], None, None).valid
    assert not _sure([line("AB 123 C")], None, None)
    assert not _sure([line("COFFEE")], None, None)
    assert not _sure([], "AR", None)


def test_two_row_plate_is_read_as_one() -> None:
    outcome = compare_plate([line("ABC", 0), line("1234", 25)], "UY", "ABC1234")
    assert outcome.valid


def test_ordinary_words_are_never_read_as_plates() -> None:
    """A bus's "emisiones" and a "Passat CC" badge were read as EMIS10 and PASS47 (letters
    forced into digit places): with nothing declared and no country, they are no plate."""
    for words in (["emisiones"], ["Passat CC"], ["PASSAT"], ["ESTACIONAMIENTO"], ["SALIDA"]):
        outcome = compare_plate([line(text) for text in words], None, None)
        assert not outcome.valid, (words, outcome.result)
    # A real plate beside the words is still read.
    outcome = compare_plate([line("Passat CC", 0), line("AYO 9034", 40)], None, None)
    assert outcome.valid and outcome.result == "AYO9034"


def test_o_and_zero_resolved_by_the_format_when_the_country_is_unknown() -> None:
    assert compare_plate([line("AY0-9034")], None, None).result == "AYO9034"
    assert compare_plate([line("NZ0 6276")], None, None).result == "NZO6276"


def test_two_row_plate_whose_boxes_overlap_is_joined() -> None:
    """OCR draws the rows' boxes loose: they overlap by 2 px and are still one plate."""
    outcome = compare_plate([line("ABC", 0), line("1234", 18)], "UY", "ABC1234")
    assert outcome.valid and outcome.result == "ABC1234"
    assert compare_plate([line("ABC", 0), line("1234", 18)], None, None).result == "ABC1234"


def test_a_nine_character_plate_is_not_cut() -> None:
    outcome = compare_plate([line("AB 123 CD4")], None, None)
    assert outcome.valid and outcome.result == "AB123CD4"
    outcome = compare_plate([line("ABCD", 0), line("12345", 18)], None, None)
    assert outcome.valid and outcome.result == "ABCD12345"


def test_a_plate_whose_groups_ocr_boxed_apart_is_read_whole() -> None:
    """Regression: a drawn `AB 123 CD` came out of OCR as three boxes (`AB`, `123`, `CD`, the
    first two overlapping by a few pixels) and was read `AB123` with no country and nothing
    with country AR: only pairs of boxes were joined, and only when they did not overlap."""
    apart = [line("AB", 0, 0.99, left=0), line("123", 0, 0.96, left=310), line("CD", 0, 0.89, 620)]
    overlapping = [line("AB", 0, left=0), line(" 123", 0, left=295), line("CD", 0, left=600)]
    for pieces in (apart, overlapping):
        for country in (None, "AR"):
            assert compare_plate(pieces, country, None).result == "AB123CD", (pieces, country)
            outcome = compare_plate(pieces, country, "AB 123 CD")
            assert outcome.valid and outcome.confidence >= 95
            assert not compare_plate(pieces, country, "AB 123 CE").valid
    # `AB 123` boxed apart from `CD`: the five characters alone are not the plate.
    assert compare_plate([line("AB 123"), line("CD", left=320)], None, None).result == "AB123CD"
    # A long word beside a plate is no part of it and costs the plate nothing.
    outcome = compare_plate([line("AB 123 CD"), line("CONCESIONARIA", left=320)], "AR", None)
    assert outcome.result == "AB123CD" and outcome.confidence >= 95


def test_a_brazilian_mercosur_plate_is_read_whole_whatever_the_country() -> None:
    """`ABC1D23` said to be Argentine was cut to the old Argentine-looking `ABC102`: another
    country's format now costs less than cutting a character and fixing a look-alike."""
    for country in (None, "BR", "AR", "UY"):
        assert compare_plate([line("ABC1D23")], country, None).result == "ABC1D23", country
        assert compare_plate([line("ABC1D23")], country, "ABC-1D23").valid
        assert not compare_plate([line("ABC1D23")], country, "ABC1D24").valid
    # The country's own format still wins where both fit: `AB123CD` stays Argentine.
    assert compare_plate([line("A8 123 CD")], "AR", None).result == "AB123CD"


def test_serial_found_after_its_caption_with_look_alikes() -> None:
    outcome = compare_serial([line("S/N: C02XK1ZJHV2O")], "c02xk1zjhv20")
    assert outcome.valid and outcome.result == "C02XK1ZJHV20"
    assert not compare_serial([line("S/N: C02XK1ZJHV20")], "C02XK1ZJHV29").valid
    assert same_code("IMEI 3S0", "1MEI350")


def test_a_serial_differing_only_where_ocr_was_unsure_is_deferred() -> None:
    """Issue 37: a character the OCR read under `CHARACTER_FLOOR` cannot refuse a declared
    serial (a person decides, `UNSURE`); a declaration differing in a character read surely
    is still refused, and look-alikes are still the same character."""
    from runtime.vision.codes import UNSURE

    unsure_eight = TextLine("SN 4711-8233", 0.9, line("").box, (0.95,) * 8 + (0.31,) + (0.95,) * 3)
    deferred = compare_serial([unsure_eight], "47115233")
    assert not deferred.valid and deferred.confidence == UNSURE
    assert deferred.result == "47118233"  # what the machine saw, for the reviewer
    refused = compare_serial([unsure_eight], "47118234")  # the last 3 was read at 0.95
    assert not refused.valid and refused.confidence < 5
    sure = TextLine("SN 4711-8233", 0.95, line("").box, (0.95,) * 12)
    assert compare_serial([sure], "47115233").confidence < 5
    assert compare_serial([unsure_eight], "4711B233").valid  # B and 8: a look-alike
    assert compare_serial([unsure_eight], "47115233", character_floor=0.3).confidence < 5


# --- MRZ, no model --------------------------------------------------------------------------

mrz_alphabet = st.text(string.ascii_uppercase + string.digits + "<", max_size=40)


@given(mrz_alphabet)
def test_check_digit_agrees_with_the_mrz_package(data: str) -> None:
    from mrz.base.functions import hash_string

    assert check_digit(data) == hash_string(data)


names = st.text(string.ascii_uppercase, min_size=2, max_size=8)
dates = st.dates(min_value=dt.date(1931, 1, 1), max_value=dt.date(2025, 12, 31))


@settings(max_examples=60, deadline=None)
@given(
    number=st.text(string.digits, min_size=8, max_size=8),
    surname=names,
    given_name=names,
    birthdate=dates,
    sex=st.sampled_from("MF"),
    td3=st.booleans(),
)
def test_generated_mrz_parses_with_every_check_digit(
    number: str, surname: str, given_name: str, birthdate: dt.date, sex: str, td3: bool
) -> None:
    from mrz.generator.td1 import TD1CodeGenerator
    from mrz.generator.td3 import TD3CodeGenerator

    birth, expiry = birthdate.strftime("%y%m%d"), "350101"
    if td3:
        code = TD3CodeGenerator(
            "P", "ARG", surname, given_name, "X" + number, "ARG", birth, sex, expiry
        )
    else:
        code = TD1CodeGenerator("ID", "ARG", number, birth, sex, expiry, "ARG", surname, given_name)
    zone = find_zone(str(code).split("\n"))
    assert zone is not None and zone.all_verified
    assert zone.document_number == ("X" + number if td3 else number)
    assert (zone.surname, zone.given_names, zone.sex) == (surname, given_name, sex)
    assert zone.birthdate == birthdate and zone.expiry == dt.date(2035, 1, 1)


TD1 = [
    "IDARG30111222<4<<<<<<<<<<<<<<<",
    "9002155F3101012ARG<<<<<<<<<<<2",
    "PEREZ<GOMEZ<<MARIA<JOSE<<<<<<<",
]


def test_ocr_confusions_repaired_under_check_digits() -> None:
    # `<` read as K or «, O for 0 in dates, a filler run short by three
    lines = [
        "IDARG30111222<4KKKKKKKKKKKKKKK",
        "9OO2155F31O1O12ARG<<<<<<<<2",
        "PEREZ<GOMEZ««MARIA<JOSE<<<<<",
    ]
    zone = find_zone(lines)
    assert zone is not None and zone.all_verified
    assert (zone.surname, zone.given_names) == ("PEREZ GOMEZ", "MARIA JOSE")
    assert zone.birthdate == dt.date(1990, 2, 15)


def test_a_lost_filler_before_the_check_digit_is_put_back() -> None:
    zone = parse_td1("IDARG301112224<<<<<<<<<<<<<<", TD1[1], TD1[2])
    assert zone.document_number == "30111222" and "document_number" in zone.verified


def test_a_corrupted_check_digit_leaves_the_field_unverified() -> None:
    zone = parse_td1(TD1[0].replace("<4<", "<5<"), TD1[1].replace("9002155", "9002156"), TD1[2])
    assert "document_number" not in zone.verified and "birthdate" not in zone.verified
    assert "expiry" in zone.verified


def test_a_passport_data_line_alone_is_read_under_its_check_digits() -> None:
    """A Taiwanese specimen's name line came out as `<N<<M<H<<<...`: its data line alone
    still gives the number, dates and sex; a line whose check digits fail is not taken."""
    data = "0000000000TWN7601015F1404018A234567893<<<<18"
    zone = find_zone(["<N<<M<H<<<<<<<<<<<<<<<<<<<<<<<<<<<", data])
    assert zone is not None and zone.document_number == "000000000"
    assert zone.birthdate == dt.date(1976, 1, 1) and zone.sex == "F" and zone.surname == ""
    assert {"document_number", "birthdate", "expiry"} <= zone.verified
    assert (
        find_zone(
            [
                "<N<<M<H<<<<<<<<<<<<<<<<<<<<<<<<<<<",
                data.replace("7601015", "7601025").replace("1404018", "1404028"),
            ]
        )
        is None
    )


def test_names_ignore_accents_case_and_order() -> None:
    from runtime.vision.identity import same_name

    assert same_name("PEREZ GOMEZ MARIA JOSE", "María José Pérez Gómez")
    assert not same_name("PEREZ GOMEZ MARIA", "María José Pérez Gómez")


def test_names_transliterated_as_icao_9303() -> None:
    """The MRZ spells Þ as TH, Æ as AE, Ö as OE (or O): an Icelandic holder's declared name
    matches her MRZ; a different name still does not."""
    from runtime.vision.identity import name_tokens, same_name

    assert same_name("AEVARSDOTTIR THURIDUR OESP", "Þuríður Ösp Ævarsdóttir")
    assert same_name("AEVARSDOTTIR THURIDUR OESP", "Þuríður Ósp Ævarsdóttir")
    assert same_name("MUELLER JOERG", "Jörg Müller") and same_name("MULLER JORG", "Jörg Müller")
    assert same_name("STRASSER", "Straßer") and same_name("HANSEN SOEREN", "Søren Hansen")
    assert not same_name("AEVARSDOTTIR THURIDUR", "Þuríður Ösp Ævarsdóttir")
    assert not same_name("AVARSDOTTIR THURIDUR OESP", "Þuríður Ösp Ævarsdóttir")
    assert name_tokens("Þór Æsa") == {"THOR", "AESA"}


def test_century_of_the_birthdate_from_the_printed_date() -> None:
    """`110101` in the MRZ is 1911 when the passport prints 01.01.1911 (a Czech specimen),
    and stays 2011 when it prints 2011; with no printed date, a birthdate after the expiry is
    the previous century's."""
    from runtime.vision.documents import settle_century
    from runtime.vision.machine_readable_zone import parse_td3

    first = "P<CZESPECIMEN<<VZOR<<<<<<<<<<<<<<<<<<<<<<<<<"
    second = "99003853<1CZE1101018M1207046110101111<<<<<94"
    zone = parse_td3(first, second)
    assert zone.birthdate == dt.date(2011, 1, 1) and zone.all_verified
    assert settle_century(zone, ["PRAHA", "01.01.1911", second]).birthdate == dt.date(1911, 1, 1)
    assert settle_century(zone, ["01.01.2011"]).birthdate == dt.date(2011, 1, 1)
    assert settle_century(zone, ["02.01.1911"]).birthdate == dt.date(2011, 1, 1)
    later = parse_td3(first, second.replace("1207046", "0907040"))
    assert settle_century(later, []).birthdate == dt.date(1911, 1, 1)


def test_age_and_sex_codes() -> None:
    from runtime.vision.identity import age_at, iso_sex

    assert age_at(dt.date(2008, 6, 2), dt.date(2026, 6, 1)) == 17
    assert age_at(dt.date(2008, 6, 1), dt.date(2026, 6, 1)) == 18
    assert (iso_sex("M"), iso_sex("F"), iso_sex("X"), iso_sex(2), iso_sex("?")) == (
        1,
        2,
        9,
        2,
        None,
    )


# --- the real model -------------------------------------------------------------------------

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("rapidocr_onnxruntime") is None,
    reason="the vision extra is not installed",
)


def jpeg_of(image: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90)  # type: ignore[attr-defined]
    return buffer.getvalue()


@pytest.fixture(scope="module")
def plate_photo() -> bytes:
    import random

    from benchmarks.vision.plates import draw_plate, plate_photo

    return plate_photo(
        draw_plate("AB123CD", "LLDDDLL", "AR", "mercosur", "dejavu-sans"), "clean", random.Random(1)
    )


@needs_model
def test_model_reads_the_declared_plate(plate_photo: bytes) -> None:
    from runtime.vision import analyze

    outcome = analyze(
        "plate", AnalysisSubject(plate_photo, declared={"plate": "AB 123 CD"}, country="AR")
    )
    assert outcome is not None and outcome.valid and outcome.result == "AB123CD"
    assert outcome.confidence >= 95


@needs_model
def test_model_gives_each_character_its_confidence(plate_photo: bytes) -> None:
    """Every line read carries one confidence per character, whose mean is the line's (the
    recognizer's own per-character probabilities: issue 37's serials and MRZ names)."""
    from runtime.vision.ocr import read_lines

    lines = read_lines(plate_photo)
    assert lines
    for found in lines:
        assert len(found.characters) == len(found.text)
        assert all(0.0 <= each <= 1.0 for each in found.characters)
        assert sum(found.characters) / len(found.characters) == pytest.approx(found.confidence)
        assert found.character_confidence(0) == found.characters[0]


@needs_model
def test_model_refuses_a_wrong_plate(plate_photo: bytes) -> None:
    from runtime.vision.plates import PlateAnalyzer

    outcome = PlateAnalyzer().analyze(
        AnalysisSubject(plate_photo, declared={"plate": "AB128CD"}, country="AR")
    )
    assert not outcome.valid and outcome.confidence <= 5 and outcome.result == "AB123CD"


@needs_model
def test_model_finds_no_plate_in_a_cat() -> None:
    from PIL import Image
    from skimage import data

    from runtime.vision.plates import PlateAnalyzer

    photo = jpeg_of(Image.fromarray(data.chelsea()))
    assert (
        not PlateAnalyzer()
        .analyze(AnalysisSubject(photo, declared={"plate": "AB123CD"}, country="AR"))
        .valid
    )
    assert not PlateAnalyzer().analyze(AnalysisSubject(photo, country="AR")).valid


@needs_model
def test_model_reads_a_drawn_mercosur_plate_boxed_in_three_pieces() -> None:
    """The regression of issue 37: read `AB123` with no country and nothing with AR."""
    from benchmarks.vision.plates import car_rear
    from runtime.vision.plates import PlateAnalyzer

    photo = car_rear("AB  123  CD")
    analyzer = PlateAnalyzer()
    for country in (None, "AR"):
        assert analyzer.analyze(AnalysisSubject(photo, country=country)).result == "AB123CD"
        declared = AnalysisSubject(photo, declared={"plate": "AB 123 CD"}, country=country)
        assert analyzer.analyze(declared).valid
        wrong = AnalysisSubject(photo, declared={"plate": "AB 128 CD"}, country=country)
        assert not analyzer.analyze(wrong).valid


@needs_model
def test_model_reads_a_drawn_brazilian_mercosur_plate_with_any_country() -> None:
    import random

    from benchmarks.vision.plates import draw_plate, plate_photo
    from runtime.vision.plates import PlateAnalyzer

    plate = draw_plate("ABC1D23", "LLLDLDD", "BR", "mercosur", "dejavu-sans")
    photo = plate_photo(plate, "clean", random.Random(3))
    analyzer = PlateAnalyzer()
    for country in (None, "BR", "AR"):
        assert analyzer.analyze(AnalysisSubject(photo, country=country)).result == "ABC1D23"
        declared = AnalysisSubject(photo, declared={"plate": "ABC 1D23"}, country=country)
        assert analyzer.analyze(declared).valid
        wrong = AnalysisSubject(photo, declared={"plate": "ABC1D28"}, country=country)
        assert not analyzer.analyze(wrong).valid


def document_photo(kind: str) -> tuple[bytes, dict[str, object]]:
    import random

    from benchmarks.vision.documents import Holder, declared_of, document_photo, draw_document

    holder = Holder(
        "Pérez Gómez", "María José", "30111222", dt.date(1990, 2, 15), "F", dt.date(2031, 1, 1)
    )
    page = draw_document(holder, kind, "AAB123456")
    return document_photo(page, "clean", random.Random(2)), declared_of(holder, kind, "AAB123456")


@pytest.mark.parametrize("kind", ["TD3", "TD1"])
@needs_model
def test_model_reads_an_identity_document_once_for_five_validations(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runtime.vision import identity

    photo, declared = document_photo(kind)
    declared = {**declared, "firstName": "jose maria", "lastName": "GOMEZ perez"}  # order, accents
    calls = []
    real = identity.read_lines
    monkeypatch.setattr(
        identity, "read_lines", lambda data, **sides: calls.append(1) or real(data, **sides)
    )
    identity.forget_readings()
    subject = AnalysisSubject(photo, declared=declared, country="AR", now=NOW)
    outcomes = {
        name: identity_outcome(name, subject)
        for name in ("dni", "full_name", "birthdate", "age", "sex")
    }
    # One reading: the MRZ's long lines, which hold every check digit here (the rest of
    # the page is not recognized), shared by the five validations.
    assert len(calls) == 1
    assert all(outcome.valid and outcome.confidence >= 95 for outcome in outcomes.values()), (
        outcomes
    )
    assert outcomes["dni"].result == ("AAB123456" if kind == "TD3" else "30111222")
    assert outcomes["birthdate"].result == "1990-02-15" and outcomes["age"].result == 36
    assert outcomes["sex"].result == 2
    entities = {entity["entity"]: entity for entity in outcomes["dni"].entities}
    assert {
        "documentNumber",
        "firstName",
        "lastName",
        "birthdate",
        "sex",
        "expiry",
        "nationality",
    } <= set(entities)
    assert all(entity["valid"] for entity in entities.values())
    wrong = AnalysisSubject(
        photo, declared={**declared, "sex": 1, "birthdate": "1990-02-16"}, now=NOW
    )
    assert (
        not identity_outcome("sex", wrong).valid and not identity_outcome("birthdate", wrong).valid
    )


def identity_outcome(name: str, subject: AnalysisSubject) -> ValidationOutcome:
    from runtime.vision import analyze

    outcome = analyze(name, subject)
    assert outcome is not None
    return outcome


@needs_model
def test_model_defers_a_document_number_whose_check_digit_is_corrupted() -> None:
    from PIL import Image, ImageDraw, ImageFont

    from runtime.vision.identity import UNSURE, DocumentNumberAnalyzer, forget_readings

    card = Image.new("RGB", (1012, 400), (225, 232, 240))
    draw = ImageDraw.Draw(card)
    mono = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 42)
    corrupted = [TD1[0].replace("<4<", "<7<"), TD1[1], TD1[2]]
    for index, text in enumerate(corrupted):
        draw.text((30, 200 + index * 54), text, font=mono, fill=(0, 0, 0))
    forget_readings()
    outcome = DocumentNumberAnalyzer().analyze(AnalysisSubject(jpeg_of(card), now=NOW))
    # Not valid, and not a confident refusal either: a check digit that fails may be OCR's
    # misreading, so the number's confidence is in the review band (issue 37).
    assert not outcome.valid and outcome.confidence == UNSURE
    entities = {entity["entity"]: entity for entity in outcome.entities}
    assert entities["documentNumber"]["valid"] is False and entities["birthdate"]["valid"] is True


@needs_model
def test_lines_asked_for_first_are_not_recognized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """`read_lines(keep=...)` recognizes only the kept boxes; asking for every line later
    finds the boxes again from the cache and recognizes only the others (issue 37: a
    document's MRZ first)."""
    from runtime.vision import identity, ocr

    photo, _ = document_photo("TD3")
    ocr.forget_lines()
    crops: list[int] = []
    engine = ocr._get_engine()
    recognize = engine.text_rec

    def counted(found: list[object], **options: object) -> object:
        crops.append(len(found))
        return recognize(found, **options)

    monkeypatch.setattr(engine, "text_rec", counted)
    long_lines = ocr.read_lines(photo, keep=identity._mrz_shaped)
    every = ocr.read_lines(photo)
    assert 2 <= len(long_lines) < len(every)
    assert {line.text for line in long_lines} <= {line.text for line in every}
    assert any("<<" in line.text for line in long_lines)
    [cached] = ocr._cache.values()
    first, rest = crops
    assert first + rest == len(cached.boxes)  # each box recognized once
    assert first >= len(long_lines) and rest >= len(every) - len(long_lines) > 0
    assert ocr.read_lines(photo) == every and len(crops) == 2  # all cached now


# --- where the MRZ is, no model (issue 37: the detector then sees only those rows) -----------

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def card_pixels(mrz: bool) -> object:
    """A 1280 x 900 card: a short title and labelled fields, and TD1's three MRZ rows from
    y = 650 (42 px characters, 54 px apart) when `mrz`."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    card = Image.new("RGB", (1280, 900), (225, 232, 240))
    draw = ImageDraw.Draw(card)
    draw.text((40, 40), "DNI", font=ImageFont.truetype(SANS, 30), fill=(20, 40, 90))
    for index, text in enumerate(("Apellido / Surname", "PEREZ GOMEZ", "Sexo / Sex", "F")):
        draw.text((400, 200 + 60 * index), text, font=ImageFont.truetype(SANS, 24), fill=(0, 0, 0))
    if mrz:
        for index, text in enumerate(TD1):
            draw.text(
                (30, 650 + index * 54), text, font=ImageFont.truetype(MONO, 42), fill=(0, 0, 0)
            )
    return np.asarray(card)


def test_the_mrz_band_holds_the_mrz_rows_and_not_the_fields_above() -> None:
    from runtime.vision.mrz_band import mrz_rows

    band = mrz_rows(card_pixels(mrz=True))  # type: ignore[arg-type]
    assert band is not None
    top, bottom = band
    assert 440 < top <= 650 and 650 + 2 * 54 + 42 <= bottom <= 900


def test_no_mrz_band_on_a_blank_photo_or_a_card_of_short_fields() -> None:
    import numpy as np

    from runtime.vision.mrz_band import mrz_rows

    assert mrz_rows(np.full((600, 800, 3), 200, dtype=np.uint8)) is None
    assert mrz_rows(card_pixels(mrz=False)) is None  # type: ignore[arg-type]


@given(
    st.integers(0, 2000), st.integers(1, 400), st.sampled_from([0.5, 1.0]), st.integers(64, 2000)
)
def test_a_band_is_cut_where_the_detector_sees_it_as_in_the_whole_photo(
    top: int, tall: int, scale: float, width: int
) -> None:
    """Cut at multiples of the detector's stride, at least 1/8 of the width high (RapidOCR
    would pad a wider picture), holding the band asked for, within the photo."""
    from runtime.vision.ocr import DETECTION_STRIDE, WIDEST_BAND, _aligned_band

    height = 2400
    cut_top, cut_bottom = _aligned_band((top, top + tall), scale, height, width)
    assert cut_top % DETECTION_STRIDE == 0 and 0 <= cut_top < cut_bottom <= height
    assert cut_bottom % DETECTION_STRIDE == 0 or cut_bottom == height
    assert cut_top <= top * scale and cut_bottom >= min(height, (top + tall) * scale)
    assert cut_bottom - cut_top >= min(height, width / WIDEST_BAND)


def test_a_band_resampled_alone_is_the_whole_photo_resampled_then_cut() -> None:
    """`ocr.FRUGAL`: PIL resamples only the band's rows (its box is passed as 32-bit floats,
    so a pixel may round one level off), not the whole photo first."""
    import numpy as np

    from runtime.vision.ocr import _scaled

    pixels = np.random.default_rng(5).integers(0, 256, (1600, 1200, 3), dtype=np.uint8)
    for band in ((0, 96), (64, 192), (320, 432)):
        alone = _scaled(pixels, (432, 576), band, frugal=True)
        cut = _scaled(pixels, (432, 576), band, frugal=False)
        assert alone.shape == cut.shape == (band[1] - band[0], 432, 3)
        assert np.abs(alone.astype(int) - cut.astype(int)).max() <= 1
    # The quick look's copy (`plates.QUICK_REDUCING_GAP`): the whole photo, reduced first.
    whole = _scaled(pixels, (432, 576), (0, 576), frugal=True, reducing_gap=1.5)
    assert whole.shape == (576, 432, 3)


@needs_model
def test_model_reads_the_same_lines_cropping_before_turning_to_bgr(plate_photo: bytes) -> None:
    """Each line's crop turned to BGR reads as the crop of the photo turned to BGR: the same
    lines, to the last digit of their confidences."""
    from runtime.vision import ocr

    ocr.forget_lines()
    frugal = ocr.read_lines(plate_photo, frugal=True)
    ocr.forget_lines()
    assert frugal and ocr.read_lines(plate_photo, frugal=False) == frugal


@needs_model
def test_model_decodes_a_photo_looked_at_twice_once(
    plate_photo: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plate's rows, then the whole photo: one decode (`ocr.DECODED_SIZE`); two without
    `frugal`, and again after `forget_lines` (the benchmarks time from an empty cache)."""
    from runtime.vision import ocr
    from runtime.vision.plates import plate_rows

    decodes: list[int] = []
    decode = ocr.rgb_array
    monkeypatch.setattr(ocr, "rgb_array", lambda *args: decodes.append(1) or decode(*args))
    for frugal, expected in ((True, 1), (False, 2)):
        ocr.forget_lines()
        decodes.clear()
        ocr.read_lines(plate_photo, rows=plate_rows, frugal=frugal)
        ocr.read_lines(plate_photo, frugal=frugal)
        assert len(decodes) == expected
    ocr.forget_lines()
    ocr.read_lines(plate_photo)
    assert len(decodes) == 3


@pytest.mark.parametrize("kind", ["TD3", "TD1", "card"])
@needs_model
def test_model_reads_the_mrz_from_its_rows_alone_and_a_card_without_one_whole(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document with an MRZ is read from the detector's look at its rows only (a fraction of
    the photo); a card without one, from the whole page after that look finds none."""
    from runtime.vision import identity, ocr
    from runtime.vision.pictures import rgb_array

    photo, declared = document_photo(kind)
    engine = ocr._get_engine()
    detect = engine.auto_text_det
    seen: list[int] = []
    monkeypatch.setattr(
        engine, "auto_text_det", lambda image: seen.append(len(image)) or detect(image)
    )
    ocr.forget_lines()
    identity.forget_readings()
    reading = identity.document_reading(photo)
    assert reading is not None
    height = len(rgb_array(photo, ocr.RECOGNITION_SIDE))
    if kind == "card":
        assert reading.source == "ocr" and seen[-1] >= height
    else:
        assert reading.source == "mrz" and reading.confidence == 1.0
        assert seen and max(seen) <= height / 3
    assert reading.document_number == str(declared["identification"]).replace(".", "")
    assert reading.birthdate == dt.date(1990, 2, 15)


def test_an_identity_field_the_machine_cannot_judge_is_unsure() -> None:
    """Not read, read under its check digit, or a name a letter or two off: `UNSURE` (a
    person decides in a review band); read well and different: a confident refusal."""
    from runtime.vision.documents import DocumentReading
    from runtime.vision.identity import UNSURE, FullNameAnalyzer, SexAnalyzer, close_name

    reading = DocumentReading(
        source="mrz",
        confidence=1.0,
        surname="VADS",
        given_names="UO",
        sex="F",
        confidences={"surname": 0.99, "given_names": 0.99, "sex": 0.99},
        names=(("VADS", "UO"),),
    )
    subject = AnalysisSubject(b"", declared={"firstName": "Quo", "lastName": "Vadis", "sex": 2})
    assert close_name("UO VADS", "Quo Vadis") and not close_name("UO VADS", "Maria Gonzalez")
    names = FullNameAnalyzer()
    assert names.judge(reading, subject, ()).confidence == UNSURE
    other = AnalysisSubject(b"", declared={"firstName": "Maria", "lastName": "Gonzalez"})
    assert names.judge(reading, other, ()).confidence < 5
    assert SexAnalyzer().judge(reading, subject, ()).valid
    male = AnalysisSubject(b"", declared={"sex": 1})
    assert SexAnalyzer().judge(reading, male, ()).confidence < 5
    # No check digit covers a name: one whose least sure MRZ letter the OCR read under the
    # floor refuses nobody (the Taiwanese specimen's `N` for `LIN`, letters at 0.42-0.52);
    # read surely, another person's name is still refused; a match is still accepted.
    misread = DocumentReading(
        source="mrz",
        confidence=1.0,
        surname="N",
        given_names="M H",
        confidences={"surname": 0.99, "given_names": 0.99},
        names=(("N", "M H"),),
        name_letters=0.42,
    )
    holder = AnalysisSubject(b"", declared={"firstName": "Mei Hua", "lastName": "Lin"})
    assert names.judge(misread, holder, ()).confidence == UNSURE
    assert names.judge(misread, other, ()).confidence == UNSURE
    assert FullNameAnalyzer(letter_floor=0.4).judge(misread, holder, ()).confidence < 5
    sure = replace(misread, name_letters=0.9)
    assert names.judge(sure, other, ()).confidence < 5
    matching = replace(misread, surname="LIN", given_names="MEI HUA", names=(("LIN", "MEI HUA"),))
    assert names.judge(matching, holder, ()).valid
    # A name not read in the MRZ (its name row lost) and printed only in Chinese characters
    # is not compared: not read.
    printed = DocumentReading(
        source="mrz",
        confidence=1.0,
        given_names="林美華",
        confidences={"given_names": 0.9},
        names=(("", ""), ("", "林美華")),
    )
    outcome = names.judge(printed, holder, ())
    assert outcome.confidence == UNSURE and outcome.result is None
    unverified = DocumentReading(source="mrz", confidence=0.5, sex="F", confidences={"sex": 0.3})
    assert SexAnalyzer().judge(unverified, male, ()).confidence == UNSURE
    assert SexAnalyzer().judge(unverified, subject, ()).confidence == UNSURE
    assert SexAnalyzer().judge(DocumentReading("ocr", 0.0), subject, ()).confidence == UNSURE


def test_an_age_the_machine_cannot_judge_is_unsure() -> None:
    """No birthdate read, or one read under its check digit: `UNSURE`, not a confident
    'not of age'; a minor read surely is still refused (issue 37)."""
    from runtime.vision.documents import DocumentReading
    from runtime.vision.identity import UNSURE, AgeAnalyzer

    now = AnalysisSubject(b"", now=NOW)
    assert AgeAnalyzer().judge(DocumentReading("mrz", 1.0), now, ()).confidence == UNSURE
    adult = dt.date(1980, 5, 1)
    weak = DocumentReading("mrz", 0.5, birthdate=adult, confidences={"birthdate": 0.3})
    assert AgeAnalyzer().judge(weak, now, ()).confidence == UNSURE
    sure = replace(weak, confidences={"birthdate": 0.99})
    assert AgeAnalyzer().judge(sure, now, ()).valid
    minor = replace(sure, birthdate=dt.date(2015, 5, 1))
    assert AgeAnalyzer().judge(minor, now, ()).confidence < 5


def test_the_least_sure_letter_of_the_mrz_names() -> None:
    """`DocumentReading.name_letters`: the OCR's per-character confidences of the names on
    the MRZ's name row (after a passport's `P<UTO`, before the fillers that end them)."""
    from runtime.vision.documents import read_document

    first = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<"
    second = "L898902C36UTO7408122F1204159ZE184226B<<<<<10"
    characters = [0.99] * len(first)
    characters[first.index("ANNA") + 1] = 0.41  # the first N of ANNA
    characters[2] = 0.2  # the issuer's U: not a name letter
    characters[-1] = 0.1  # a filler
    rows = [
        TextLine(first, 0.9, line("", top=0).box, tuple(characters)),
        TextLine(second, 0.95, line("", top=40).box),
    ]
    reading = read_document(rows)
    assert reading is not None and reading.surname == "ERIKSSON"
    assert reading.name_letters == 0.41
    data_only = read_document([TextLine(second, 0.95, line("", top=40).box)])
    assert data_only is not None and data_only.name_letters is None
    assert "surname" not in data_only.confidences  # a name not read is confirmed by nothing
