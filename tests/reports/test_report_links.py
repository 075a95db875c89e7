"""Signed report links: fresh, expiring, and refused when altered."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from server.reports.links import LINK_TTL_SECONDS, LinkError, sign_link, verify_link

SECRET = "s3cret-for-tests"


def parts(url: str) -> tuple[str, str, str]:
    split = urlsplit(url)
    query = parse_qs(split.query)
    return split.path.rsplit("/", 1)[1], query["expires"][0], query["signature"][0]


def test_link_shape_and_validity_window() -> None:
    url, expires = sign_link("https://api.example.com/", SECRET, "abc123", now=1_000_000)
    assert url.startswith("https://api.example.com/v1/report/file/abc123?expires=")
    assert expires == 1_000_000 + LINK_TTL_SECONDS == 1_000_900
    report_id, exp, sig = parts(url)
    verify_link(SECRET, report_id, exp, sig, now=1_000_000 + LINK_TTL_SECONDS)
    with pytest.raises(LinkError) as caught:
        verify_link(SECRET, report_id, exp, sig, now=1_000_000 + LINK_TTL_SECONDS + 1)
    assert caught.value.code == "report_link_expired"


@pytest.mark.parametrize("change", ["id", "expires", "signature", "secret", "missing"])
def test_altered_links_are_invalid(change: str) -> None:
    url, _ = sign_link("http://x", SECRET, "abc123", now=1_000_000)
    report_id, exp, sig = parts(url)
    secret = SECRET
    given_sig: object = sig
    if change == "id":
        report_id = "abc124"
    elif change == "expires":
        exp = str(int(exp) + 3600)  # extending the link must not work
    elif change == "signature":
        given_sig = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    elif change == "secret":
        secret = "another"
    else:
        given_sig = None
    with pytest.raises(LinkError) as caught:
        verify_link(secret, report_id, exp, given_sig, now=1_000_000)
    assert caught.value.code == "report_link_invalid"


def test_expired_and_altered_is_invalid_not_expired() -> None:
    url, _ = sign_link("http://x", SECRET, "abc", now=1_000)
    report_id, _expires, sig = parts(url)
    with pytest.raises(LinkError) as caught:
        verify_link(SECRET, report_id, "not-a-number", sig, now=10_000_000)
    assert caught.value.code == "report_link_invalid"


def test_each_signing_gives_a_fresh_link() -> None:
    first, _ = sign_link("http://x", SECRET, "abc", now=1_000)
    second, _ = sign_link("http://x", SECRET, "abc", now=1_060)
    assert first != second


def test_links_are_signed_with_the_token_scheme() -> None:
    """One signing scheme: a link's signature is `server.tokens.sign` of what it stands for."""
    from server import tokens

    url, _ = sign_link("http://x", SECRET, "abc123", now=1_000)
    report_id, exp, sig = parts(url)
    assert sig == tokens.sign(f"report-link|{report_id}|{exp}", secret=SECRET)
    assert tokens.signature_matches(f"report-link|{report_id}|{exp}", sig, secret=SECRET)


@pytest.mark.parametrize(("report_id", "signature"), [("é", "x"), ("abc", "é"), ("\x00", "")])
def test_non_ascii_ids_and_signatures_are_invalid_links(report_id: str, signature: str) -> None:
    with pytest.raises(LinkError) as caught:
        verify_link(SECRET, report_id, "2000000000", signature, now=1_000)
    assert caught.value.code == "report_link_invalid"
