"""Issue 21 §4: outside analysis provider URLs go through the outgoing-URL guard.

Before: `INSPECTLANG_VALIDATION_PROVIDERS` took any http(s) URL (the metadata service, a private
address, this machine) and the worker posted photos there. Now every provider URL is checked by
`server.urlsafety` when the API or a worker starts (a refused one stops it, naming the
variable) and again before each call; loopback needs `INSPECTLANG_ALLOW_LOOPBACK_PROVIDERS`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.images.providers import ProviderError, ProviderRequest, call
from server.settings import Settings, SettingsError
from server.urlsafety import check_provider_urls


def public(host: str, port: int) -> list[str]:
    return ["93.184.216.34"]


def with_providers(settings: Settings, url: str, **extra: Any) -> Settings:
    return settings.model_copy(
        update={
            "validation_providers": {"make": url},
            "validation_provider_secret": "k",
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:8080/analyse", "loopback"),
        ("http://localhost:8080/analyse", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://10.0.0.7/analyse", "private"),
        ("http://[::1]/analyse", "loopback"),
    ],
)
def test_unsafe_provider_urls_stop_the_start(settings: Settings, url: str, why: str) -> None:
    with pytest.raises(SettingsError, match=why) as refused:
        check_provider_urls(with_providers(settings, url))
    assert "INSPECTLANG_VALIDATION_PROVIDERS" in str(refused.value)


def test_loopback_needs_the_development_setting(settings: Settings) -> None:
    loopback = with_providers(settings, "http://127.0.0.1:8080/analyse")
    with pytest.raises(SettingsError, match="INSPECTLANG_ALLOW_LOOPBACK_PROVIDERS"):
        check_provider_urls(loopback)
    check_provider_urls(loopback.model_copy(update={"allow_loopback_providers": True}))
    # The setting allows loopback only: the metadata service and private ranges stay refused.
    metadata = with_providers(settings, "http://169.254.169.254/", allow_loopback_providers=True)
    with pytest.raises(SettingsError, match="metadata"):
        check_provider_urls(metadata)
    check_provider_urls(with_providers(settings, "https://vision.example.com/v1"), resolver=public)


def test_the_app_does_not_start_with_a_refused_provider(settings: Settings, db: Any) -> None:
    from server.app import create_app

    with pytest.raises(SettingsError, match="loopback"):
        create_app(with_providers(settings, "http://127.0.0.1:9/analyse"), db=db)


def test_the_worker_command_refuses_to_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.update(
        INSPECTLANG_VALIDATION_PROVIDERS="make=http://127.0.0.1:9/analyse",
        INSPECTLANG_VALIDATION_PROVIDER_SECRET="k",
    )
    done = subprocess.run(
        [sys.executable, "-m", "server", "worker", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).parents[2],
        timeout=120,
    )
    assert done.returncode == 1, done.stdout
    refusal = json.loads(done.stderr.strip().splitlines()[-1])
    assert refusal["code"] == "invalid_settings"
    assert "INSPECTLANG_ALLOW_LOOPBACK_PROVIDERS" in refusal["description"]


def test_each_call_checks_the_url_again(settings: Settings) -> None:
    """A name that resolved to a public address at start-up and to this machine now (DNS
    rebinding) is not called."""
    request = ProviderRequest(
        validation="make",
        inspection_id="1" * 24,
        image_id="0" * 24,
        data=b"\xff\xd8\xff",
        content_type="image/jpeg",
    )
    configured = with_providers(settings, "http://127.0.0.1:9/analyse")
    with pytest.raises(ProviderError) as refused:
        call(configured, "http://127.0.0.1:9/analyse", request)
    assert not refused.value.transient
    assert "loopback" in str(refused.value)
