"""The callback URL policy: form errors, and every refused address class in production."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from server.urlsafety import UnsafeURLError, address_refusal, check_url


def resolver_to(*addresses: str) -> object:
    def resolve(host: str, port: int) -> Sequence[str]:
        return list(addresses)

    return resolve


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://example.com",
        "javascript:alert(1)",
        "http://",
        "https://user:pass@example.com/",
        "http://exa mple.com/",
        "http://example.com:99999/",
        "x" * 3000,
        12345,
        None,
    ],
)
def test_malformed_urls_are_invalid_callback_url(url: object) -> None:
    with pytest.raises(UnsafeURLError) as caught:
        check_url(url, production=True, allow_loopback=False, resolver=resolver_to("8.8.8.8"))
    assert caught.value.code == "invalid_callback_url"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.5.6.7", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "reserved"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
    ],
)
def test_each_class_of_internal_address_is_refused_in_production(address: str, kind: str) -> None:
    assert address_refusal(address, allow_loopback=False) == kind
    with pytest.raises(UnsafeURLError) as caught:
        check_url(
            "https://hooks.example.com/x",
            production=True,
            allow_loopback=False,
            resolver=resolver_to("93.184.216.34", address),
        )
    assert caught.value.code == "callback_url_not_allowed"
    assert kind in caught.value.description


def test_literal_ip_hosts_are_checked_with_the_system_resolver() -> None:
    for url in ("http://127.0.0.1:9/x", "http://[::1]/x", "http://169.254.169.254/latest"):
        with pytest.raises(UnsafeURLError) as caught:
            check_url(url, production=True, allow_loopback=False)
        assert caught.value.code == "callback_url_not_allowed"


def test_public_addresses_pass_and_are_recorded() -> None:
    checked = check_url(
        "https://hooks.example.com:8443/in",
        production=True,
        allow_loopback=False,
        resolver=resolver_to("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"),
    )
    assert checked.host == "hooks.example.com"
    assert checked.port == 8443
    assert checked.addresses == ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")


def test_loopback_setting_allows_loopback_only() -> None:
    checked = check_url("http://127.0.0.1:8080/cb", production=True, allow_loopback=True)
    assert checked.addresses == ("127.0.0.1",)
    for address in ("10.0.0.1", "169.254.169.254", "192.168.0.5"):
        with pytest.raises(UnsafeURLError) as caught:
            check_url(
                "http://internal.example/",
                production=True,
                allow_loopback=True,
                resolver=resolver_to(address),
            )
        assert caught.value.code == "callback_url_not_allowed"


def test_unresolvable_host_is_refused_in_production() -> None:
    def failing(host: str, port: int) -> Sequence[str]:
        raise OSError("no such host")

    with pytest.raises(UnsafeURLError) as caught:
        check_url(
            "https://nowhere.invalid/", production=True, allow_loopback=False, resolver=failing
        )
    assert caught.value.code == "callback_url_not_allowed"


def test_development_checks_only_the_form() -> None:
    checked = check_url("http://10.0.0.1/cb", production=False, allow_loopback=False)
    assert checked.url == "http://10.0.0.1/cb"
    with pytest.raises(UnsafeURLError):
        check_url("ftp://10.0.0.1/cb", production=False, allow_loopback=False)
