"""Which callback and webhook URLs the service may connect to (server-side request forgery policy).

A URL must be http(s) with a host. In production every address the host resolves to must be a
public unicast address: loopback, private, link-local, multicast, reserved, unspecified and cloud
metadata ranges are refused. The check runs when a URL is registered AND again right before each
delivery, because DNS answers can change in between (DNS rebinding). `allow_loopback` (setting
`INSPECTLANG_ALLOW_LOOPBACK_WEBHOOKS`) lets development and tests deliver to 127.0.0.1 / ::1.

This is the one guard of outgoing URLs: `check_endpoint` when a URL is registered (a webhook
endpoint, a report's or an inspection's `callbackURL`: 400 with the policy's code), and
`check_url_for` before each delivery. Outside analysis providers (`validation_providers`) are
checked by `check_provider_urls` when the API or a worker starts (a refused one stops it) and
by `check_provider_url` before each call: their addresses are checked whatever the
environment, and loopback needs `INSPECTLANG_ALLOW_LOOPBACK_PROVIDERS` (development and tests).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from server.errors import ApiError, ServerError
from server.settings import Settings, SettingsError

#: Longest URL accepted for a callback or webhook endpoint.
MAX_URL_LENGTH = 2048

#: Cloud metadata services, refused even where private ranges would be allowed.
METADATA_ADDRESSES: frozenset[ipaddress.IPv4Address | ipaddress.IPv6Address] = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)

#: Ranges Python's `ipaddress` flags do not all cover, refused as well.
EXTRA_BLOCKED_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = (
    ipaddress.ip_network("0.0.0.0/8"),
    ipaddress.ip_network("100.64.0.0/10"),  # carrier-grade NAT
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("198.18.0.0/15"),  # benchmarking
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 can reach IPv4 private space
)

Resolver = Callable[[str, int], Sequence[str]]


class UnsafeURLError(ServerError, ValueError):
    """A URL the service refuses to call; `code` is the stable API error code."""

    def __init__(self, code: str, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


@dataclass(frozen=True)
class CheckedURL:
    """A URL that passed the policy, with the addresses its host resolved to at check time."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]


def system_resolver(host: str, port: int) -> Sequence[str]:
    """Every address `host` resolves to, through the system resolver."""
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def address_refusal(address: str, *, allow_loopback: bool) -> str | None:
    """Why `address` may not be called (a short class name), or None when it is public."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if ip.is_loopback:
        return None if allow_loopback else "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if any(ip in network for network in EXTRA_BLOCKED_NETWORKS if network.version == ip.version):
        return "reserved"
    if not ip.is_global:
        return "reserved"
    return None


def parse_url(url: object) -> tuple[str, str, int]:
    """Check a callback URL's form: (url, host, port), or raise `invalid_callback_url`."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise UnsafeURLError(
            "invalid_callback_url",
            f"The URL must be a string of 1 to {MAX_URL_LENGTH} characters.",
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UnsafeURLError("invalid_callback_url", f"The URL is malformed: {error}.") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeURLError("invalid_callback_url", "The URL must use http or https.")
    host = parts.hostname
    if not host:
        raise UnsafeURLError("invalid_callback_url", "The URL has no host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeURLError("invalid_callback_url", "The URL must not carry credentials.")
    if any(ch.isspace() for ch in url):
        raise UnsafeURLError("invalid_callback_url", "The URL must not contain whitespace.")
    return url, host, port if port is not None else (443 if parts.scheme == "https" else 80)


def check_url(
    url: object,
    *,
    production: bool,
    allow_loopback: bool,
    resolver: Resolver = system_resolver,
) -> CheckedURL:
    """Check a callback/webhook URL against the policy; raise `UnsafeURLError` when refused.

    Outside production only the form is checked (the addresses are still resolved when
    possible, for the record). In production a host that does not resolve is refused too.
    """
    text, host, port = parse_url(url)
    if not production:
        return CheckedURL(text, host, port, ())
    try:
        addresses = tuple(resolver(host, port))
    except (OSError, UnicodeError):
        raise UnsafeURLError(
            "callback_url_not_allowed", f"The host {host!r} does not resolve."
        ) from None
    if not addresses:
        raise UnsafeURLError("callback_url_not_allowed", f"The host {host!r} does not resolve.")
    for address in addresses:
        refusal = address_refusal(address, allow_loopback=allow_loopback)
        if refusal is not None:
            raise UnsafeURLError(
                "callback_url_not_allowed",
                f"The host {host!r} resolves to a {refusal} address ({address}), "
                "which the service does not call.",
            )
    return CheckedURL(text, host, port, addresses)


def check_url_for(
    settings: Settings, url: object, *, resolver: Resolver = system_resolver
) -> CheckedURL:
    """`check_url` with the policy `settings` set: addresses are checked in production, and
    loopback is allowed when `allow_loopback_webhooks` is on."""
    return check_url(
        url,
        production=settings.env == "production",
        allow_loopback=settings.allow_loopback_webhooks,
        resolver=resolver,
    )


def check_endpoint(url: object, settings: Settings) -> str:
    """The URL when the policy allows it; else a 400 `ApiError` with the policy's code
    (`invalid_callback_url` or `callback_url_not_allowed`)."""
    try:
        return check_url_for(settings, url).url
    except UnsafeURLError as error:
        raise ApiError(error.code, 400, error.description) from None


def check_provider_url(
    settings: Settings, url: str, *, resolver: Resolver = system_resolver
) -> CheckedURL:
    """An outside analysis provider's URL against the policy, in any environment (an operator
    wrote it, but a typo or a rebinding DNS name must not reach internal services)."""
    return check_url(
        url, production=True, allow_loopback=settings.allow_loopback_providers, resolver=resolver
    )


def check_provider_urls(settings: Settings, *, resolver: Resolver = system_resolver) -> None:
    """Every configured provider URL, at start-up: `SettingsError` naming the first refused."""
    for name, url in sorted(settings.validation_providers.items()):
        try:
            check_provider_url(settings, url, resolver=resolver)
        except UnsafeURLError as error:
            hint = (
                " (a provider on this machine needs INSPECTLANG_ALLOW_LOOPBACK_PROVIDERS=1, "
                "for development only)"
                if "loopback" in error.description
                else ""
            )
            raise SettingsError(
                f"INSPECTLANG_VALIDATION_PROVIDERS: the provider of {name!r} ({url}) is refused: "
                f"{error.description}{hint}"
            ) from None
