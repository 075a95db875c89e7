"""How fast the language server shows diagnostics, and how it takes a burst of changes.

Starts `inspectlang lsp` as a subprocess and drives it over stdio with pygls's LanguageClient,
the way an editor does, on an example template (examples/used_phone_resale.insp):

- single edits: 40 changes, each sent after the previous one's diagnostics arrived (typing
  with pauses); the time from sending a change to receiving its diagnostics, median and p90;
- bursts: 10 changes sent back to back (a paste, an editor applying several edits), 5 times;
  how many publications each burst brings (the server debounces: 1 is the target, for the
  last text) and the time from the last change to its diagnostics;
- the baseline, in the same run: the fastest in-process `inspectlang.lsp.index.diagnostics` of
  the same text (the work a publication cannot avoid); `latency_vs_check` is the single-edit
  median over it, what the protocol, the process boundary and the debounce add.

Before the debounce (issue 25) a burst published 10 times and its last diagnostics arrived
after 216 ms, with a single-edit median of 17 ms on the same machine. The last line printed is
ONE JSON object.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspectlang.lsp.index import diagnostics  # noqa: E402

EXAMPLE = ROOT / "examples" / "used_phone_resale.insp"
URI = "file:///bench/used_phone_resale.insp"
SINGLE_EDITS = 40
BURSTS = 5
BURST_SIZE = 10


def _variant(text: str, n: int) -> str:
    """The text with an edit that changes its diagnostics every other time (a typo)."""
    return text.replace("inputs.imei", "inputs.imie", 1) if n % 2 else text + f"# edit {n}\n"


async def main() -> dict[str, object]:
    text = EXAMPLE.read_text(encoding="utf-8")
    client = LanguageClient("bench", "1")
    arrived: asyncio.Queue[tuple[int | None, float]] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        arrived.put_nowait((params.version, time.perf_counter()))

    await client.start_io(sys.executable, "-m", "inspectlang", "lsp", cwd=str(ROOT))
    await client.initialize_async(
        types.InitializeParams(
            process_id=None, root_uri=None, capabilities=types.ClientCapabilities()
        )
    )
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(URI, "insp", 1, text))
    )
    await arrived.get()
    version = 1

    def change(new_text: str) -> float:
        nonlocal version
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
        return time.perf_counter()

    single: list[float] = []
    for n in range(SINGLE_EDITS):
        sent = change(_variant(text, n))
        got_version, at = await asyncio.wait_for(arrived.get(), 30)
        assert got_version == version, (got_version, version)
        single.append((at - sent) * 1000)
        await asyncio.sleep(0.05)

    publications: list[int] = []
    last_latency: list[float] = []
    for burst in range(BURSTS):
        sent = 0.0
        for n in range(BURST_SIZE):
            sent = change(_variant(text, burst * BURST_SIZE + n + 1))
        seen = []
        while True:
            got_version, at = await asyncio.wait_for(arrived.get(), 30)
            seen.append(got_version)
            if got_version == version:
                last_latency.append((at - sent) * 1000)
                break
        await asyncio.sleep(0.3)  # anything late is counted too
        while not arrived.empty():
            seen.append(arrived.get_nowait()[0])
        publications.append(len(seen))

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()

    checks = []
    for _ in range(20):
        start = time.perf_counter()
        diagnostics(_variant(text, 1))
        checks.append((time.perf_counter() - start) * 1000)
    check_ms = min(checks)
    median = statistics.median(single)
    return {
        "single_edit_median_ms": round(median, 1),
        "single_edit_p90_ms": round(statistics.quantiles(single, n=10)[-1], 1),
        "in_process_check_ms": round(check_ms, 1),
        "latency_vs_check": round(median / check_ms, 2),
        "burst_publications_max": max(publications),
        "burst_last_latency_median_ms": round(statistics.median(last_latency), 1),
    }


if __name__ == "__main__":
    result = asyncio.run(main())
    for key, value in result.items():
        print(f"{key}: {value}")
    print(json.dumps(result))
