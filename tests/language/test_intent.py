"""What a template says of its own intent (issue 33): which of two dates comes first, told by
their names (W018, `inspectlang.checker.event_words`), and a check shown `for information`
(W017 reports any other check nothing reads, W019 a marked one a verdict line reads). The
positions and suggestions are pinned by the vectors of tests/conformance/language/meaning.json;
these are the flagged and not flagged cases around them."""

from __future__ import annotations

import pytest

from inspectlang.checker.event_words import date_role
from inspectlang.compiler import check_source, compile_source
from inspectlang.decompiler import decompile
from inspectlang.formatter import format_source

HEADER = 'template "Parcel"\n    type: goods\n'
IMAGE = '\nimage front\n    label: "Packages"\n    validate object\n'
TAIL = '    approve when all(i in images where i.approved)\n    otherwise "Photos not approved"\n'


def dates(first: str, second: str, condition: str, labels: tuple[str, str] = ("", "")) -> str:
    """Two required date inputs (with optional label lines) and a disapproval on `condition`."""
    inputs = "".join(
        f"\ninput {name}\n    type: date\n{label}    required\n"
        for name, label in zip((first, second), labels, strict=True)
    )
    return f'{HEADER}{inputs}{IMAGE}\nverdict\n    disapprove "Late" when {condition}\n{TAIL}'


def codes(source: str) -> list[str]:
    return [d.code for d in check_source(source, "t.insp")]


@pytest.mark.parametrize(
    ("texts", "role"),
    [
        (["promised"], "start"),
        (["delivered"], "end"),
        (["due_date"], "start"),
        (["policy_start"], "start"),
        (["expiry"], "end"),
        (["x", "Fecha de emisión"], "start"),
        (["x", "Fecha de devolución"], "end"),
        (["x", "Data de nascimento"], "start"),
        (["x", "Data do sinistro"], "end"),
        (["x", "Começo da vigência"], "start"),
        (["order_delivered"], None),  # both kinds: no role
        (["first_visit"], None),
        (["endorsement"], None),  # `end` is a whole word, not a stem
        (["fecha_vencimiento"], None),  # a due date as much as an end: in neither list
    ],
)
def test_a_date_role_is_read_from_its_words(texts: list[str], role: str | None) -> None:
    assert date_role(texts) == role


@pytest.mark.parametrize(
    ("first", "second", "condition", "suggestion"),
    [
        (
            "promised",
            "delivered",
            "days_between(inputs.delivered, inputs.promised) > 2",
            "days_between(inputs.promised, inputs.delivered)",
        ),
        (
            "policy_start",
            "claim_date",
            "months_between(inputs.claim_date, inputs.policy_start) < 3",
            "months_between(inputs.policy_start, inputs.claim_date)",
        ),
        (
            "issued",
            "expires",
            "years_between(inputs.expires, inputs.issued) > 5",
            "years_between(inputs.issued, inputs.expires)",
        ),
    ],
)
def test_a_date_difference_counted_backwards_by_its_names_is_w018(
    first: str, second: str, condition: str, suggestion: str
) -> None:
    [found] = check_source(dates(first, second, condition), "t.insp")
    assert (found.code, found.severity, found.suggestion) == ("W018", "warning", suggestion)
    assert f"-{suggestion}" in found.notes[0]  # how to count back on purpose


def test_w018_reads_the_labels_in_every_locale() -> None:
    labels = ('    label: "Fecha A"\n    label pt_BR: "Entregue em"\n', '    label: "Fecha B"\n')
    source = dates("fecha_a", "fecha_b", "days_between(inputs.fecha_a, inputs.fecha_b) > 2", labels)
    source = source.replace("    type: goods\n", "    type: goods\n    locales: es_AR, pt_BR\n")
    assert codes(source) == []  # the second date has no role
    source = source.replace('label: "Fecha B"', 'label: "Fecha del pedido"')
    assert codes(source) == ["W018"]


@pytest.mark.parametrize(
    "condition",
    [
        "days_between(inputs.promised, inputs.delivered) > 2",  # forward
        "-days_between(inputs.promised, inputs.delivered) < -2",  # back on purpose, said so
        "days_between(inputs.promised, inputs.promised) > 2",  # one date: nothing to order
        "days_between(inputs.delivered, today()) > 2",  # today() has no role
    ],
)
def test_w018_is_not_said_of_a_forward_or_unordered_difference(condition: str) -> None:
    assert codes(dates("promised", "delivered", condition)) == []


def test_w018_is_not_said_of_names_with_no_event_word() -> None:
    condition = "days_between(inputs.second_visit, inputs.first_visit) > 2"
    assert codes(dates("first_visit", "second_visit", condition)) == []


KM = '\ninput km\n    type: numeric\n    label: "Mileage"\n    minimum: 0\n    required\n'


def checks_template(check: str, verdict: str = "") -> str:
    return f"{HEADER}{KM}{IMAGE}\n{check}\nverdict\n{verdict}{TAIL}"


LOW = "check low_mileage\n    valid when: inputs.km < 300000\n"
SEEN = "check seen\n    valid when: images.front.object.valid\n"


def test_an_unread_check_is_w017_even_when_the_verdict_reads_no_check() -> None:
    [found] = check_source(checks_template(LOW), "t.insp")
    assert found.code == "W017"
    assert "for information" in found.message
    assert (found.span.line, found.span.column) == (14, 7)


def test_a_check_for_information_is_not_w017() -> None:
    assert codes(checks_template(LOW + "    for information\n")) == []
    # beside a check the verdict reads, too
    read = '    disapprove "Not seen" when not checks.seen\n'
    assert codes(checks_template(LOW + "    for information\n\n" + SEEN, read)) == []
    assert codes(checks_template(LOW + "\n" + SEEN, read)) == ["W017"]


def test_a_check_read_only_by_another_check_is_not_w017() -> None:
    both = LOW + "\ncheck cheap\n    valid when: checks.low_mileage\n    for information\n"
    assert codes(checks_template(both)) == []


def test_a_check_for_information_that_a_verdict_line_reads_is_w019() -> None:
    read = '    disapprove "Too far" when not checks.low_mileage\n'
    [found] = check_source(checks_template(LOW + "    for information\n", read), "t.insp")
    assert found.code == "W019"
    assert found.span.line == 19  # the line's `checks.low_mileage`
    assert codes(checks_template(LOW, read)) == []


def test_an_unknown_flag_on_a_check_is_e010_with_the_one_it_is_close_to() -> None:
    [found] = check_source(checks_template(LOW + "    for informaton\n"), "t.insp")
    assert (found.code, found.suggestion) == ("E010", "for information")


def test_for_information_is_in_the_manifest_and_comes_back() -> None:
    read = '    disapprove "Not seen" when not checks.seen\n'
    source = checks_template(LOW + "    for information\n\n" + SEEN, read)
    manifest = compile_source(source, "t.insp")
    low, seen = manifest.to_api()["logic"]["checks"]
    assert low["informational"] is True
    assert "informational" not in seen
    assert "    for information\n" in decompile(manifest)
    assert format_source(source) == source


def _ordered(source: str, later: str, earlier: str, key: str = "not before") -> str:
    """`source` with input `later` declaring `key: earlier`."""
    line = f"\ninput {later}\n    type: date\n    required\n"
    assert line in source
    return source.replace(line, f"{line}    {key}: {earlier}\n")


def test_a_declared_order_makes_w018_a_proof_w012() -> None:
    """`delivered not before promised`: `days_between(delivered, promised)` is never positive,
    whatever the names say, so W012 (a sign fixed by the declarations), not W018 (names)."""
    backwards = dates(
        "promised", "delivered", "days_between(inputs.delivered, inputs.promised) > 2"
    )
    assert codes(backwards) == ["W018"]
    assert codes(_ordered(backwards, "delivered", "promised")) == ["W012"]
    # The same order said from the other side.
    assert codes(_ordered(backwards, "promised", "delivered", "not after")) == ["W012"]
    neutral = dates("a", "b", "days_between(inputs.b, inputs.a) > 2")
    assert codes(neutral) == []  # the names say nothing
    [found] = check_source(_ordered(neutral, "b", "a"), "t.insp")
    assert (found.code, found.suggestion) == ("W012", "days_between(inputs.a, inputs.b)")


def test_a_declared_order_wins_over_the_names() -> None:
    """Names say `promised` first, the template declares it is never before `delivered`: the
    count `days_between(delivered, promised)` is then never negative, and nothing is said; the
    forward count the names like is the one reported as never positive."""
    backwards = dates(
        "promised", "delivered", "days_between(inputs.delivered, inputs.promised) > 2"
    )
    assert codes(_ordered(backwards, "promised", "delivered")) == []
    forward = dates("promised", "delivered", "days_between(inputs.promised, inputs.delivered) > 2")
    assert codes(_ordered(forward, "promised", "delivered")) == ["W012"]


def test_the_order_round_trips_through_fmt_and_the_manifest() -> None:
    source = _ordered(
        dates("promised", "delivered", "days_between(inputs.promised, inputs.delivered) > 2"),
        "delivered",
        "promised",
    )
    assert format_source(source) == source
    again = decompile(compile_source(source, "t.insp"))
    assert "    not before: promised\n" in again
    assert compile_source(again, "t.insp").inputs == compile_source(source, "t.insp").inputs
