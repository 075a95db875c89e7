"""The `duplicate` validation's look-up: has this photo (or a near copy: resized, recompressed,
cropped by a few percent) already been uploaded to another inspection of the company?

Every uploaded photo's perceptual hashes (`runtime.photohash`: the whole photo and its central
crop, 64 bits each) are kept in `photo_hashes`, cut in 4 bands of 16 bits, each band in its own
column indexed after the company (multi-index hashing). A look-up asks, per band, for the rows
whose band equals one of the new photo's band values or its one-bit neighbours (17 values per
band and hash): by the pigeonhole principle every stored photo within 7 bits of the new one
shares a band up to one bit, and one within 8-10 bits usually does. The rows this returns
are then measured exactly (`runtime.photohash.nearest`, up to `NEAR_BITS`): inside the index
scan on PostgreSQL 14 and later, so only the matches leave the database, in Python elsewhere.
At 1,000,000 stored photos of one company on PostgreSQL a look-up reads about 1,100 band
candidates and took 1.8-3.0 ms (median, whole call; p95 6-11 ms) on this 2-core machine at a
load of 2-9, against 4.5-7.0 ms when every candidate came back to Python
(`benchmarks/bench_duplicates.py`, figures in docs/vision.md).

The upload looks up and inserts in one transaction under `lock`: two uploads of one photo at
the same moment cannot both miss each other.

The runtime judges; this module only finds (`runtime.evidence.DuplicateValidator` gets the
matches through `ImageUpload.duplicates`).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select, text, union_all
from sqlmodel import Session

from runtime.evidence import DuplicateMatch
from runtime.photohash import NEAR_BITS, bands, nearest, probes, signed, unsigned
from server.images.tables import PhotoHashRecord

#: Candidate rows measured at most per look-up (the nearest are kept).
MAX_CANDIDATES = 20_000
#: Matches kept per look-up, nearest first.
MAX_MATCHES = 5


def band_values(whole: int, center: int) -> dict[str, int]:
    """The band columns of a photo's row."""
    return {
        **{f"w{index}": value for index, value in enumerate(bands(whole))},
        **{f"c{index}": value for index, value in enumerate(bands(center))},
    }


def row(
    company_id: str,
    testing: bool,
    inspection_id: str,
    image_id: str,
    whole: int,
    center: int,
    now: datetime,
) -> PhotoHashRecord:
    return PhotoHashRecord(
        company_id=company_id,
        testing=testing,
        inspection_id=inspection_id,
        image_id=image_id,
        phash=signed(whole),
        phash_center=signed(center),
        created_at=now,
        **band_values(whole, center),
    )


def _wanted(new: tuple[int, int]) -> dict[str, list[int]]:
    """The band values asked for, by band column (see `lookup_statement`)."""
    whole_probes, whole_bands, center_bands = probes(new[0]), bands(new[0]), bands(new[1])
    wanted = {}
    for index in range(4):
        wanted[f"w{index}"] = sorted(set(whole_probes[index]) | {center_bands[index]})
        wanted[f"c{index}"] = [whole_bands[index]]
    return wanted


def postgres_lookup(new: tuple[int, int], *, measured: bool = True) -> Any:
    """The same look-up as `lookup_statement` for PostgreSQL, as one text: the band values are
    written into it (integers this module computed, never text from a request), so the planner
    sees them and picks the band index for each branch (with array parameters a prepared,
    generic plan read whole indexes: 40 ms at a million photos instead of about 1.5 ms), and
    nothing is built or compiled through SQLAlchemy per upload.

    With `measured` (PostgreSQL 14 and later: `bit_count`) each branch also measures the
    candidates' distance inside the index scan (the hashes are in the index), so only the
    photos within `NEAR_BITS` come back: at a million photos a look-up reads about a thousand
    band candidates, and sending and measuring them in Python cost five times what the
    database spends finding them."""
    whole, center = signed(new[0]), signed(new[1])
    near = (
        f" AND (bit_count((phash # {whole})::bit(64)) <= {NEAR_BITS}"
        f" OR bit_count((phash_center # {whole})::bit(64)) <= {NEAR_BITS}"
        f" OR bit_count((phash # {center})::bit(64)) <= {NEAR_BITS})"
        if measured
        else ""
    )
    branches = [
        "(SELECT inspection_id, image_id, phash, phash_center FROM photo_hashes"
        f" WHERE company_id = :company AND {column} IN ({', '.join(str(int(v)) for v in values)})"
        f" AND testing = :testing AND inspection_id != :inspection{near})"
        for column, values in _wanted(new).items()
    ]
    return text(" UNION ALL ".join(branches) + f" LIMIT {MAX_CANDIDATES}")


def measures_in_postgres(session: Session) -> bool:
    """Whether the PostgreSQL server has `bit_count` (14 and later)."""
    version = session.connection().dialect.server_version_info
    return version is not None and tuple(version) >= (14,)


def postgres_arguments(company_id: str, testing: bool, inspection_id: str) -> dict[str, Any]:
    """The parameters of `postgres_lookup`."""
    return {"company": company_id, "testing": testing, "inspection": inspection_id}


def lookup_statement(
    company_id: str,
    testing: bool,
    inspection_id: str,
    new: tuple[int, int],
) -> Any:
    """The candidate rows' query: a band of the stored whole photo within one bit of the new
    whole's, or equal to the new central crop's; or a band of the stored central crop equal to
    the new whole's (a crop's hashes move few bits: 2 at most for 5% off every side). One
    index-only scan per band column (`UNION ALL`; each index includes what is read)."""
    table = cast(Any, PhotoHashRecord)
    wanted = _wanted(new)
    parts = [
        select(table.inspection_id, table.image_id, table.phash, table.phash_center).where(
            table.company_id == company_id,
            getattr(table, column).in_(values),
            table.testing == testing,
            table.inspection_id != inspection_id,
        )
        for column, values in wanted.items()
    ]
    return union_all(*parts).limit(MAX_CANDIDATES)


def lock(session: Session, company_id: str, testing: bool) -> None:
    """Serialize, until the transaction ends, the look-up and insert of the company's photo
    hashes (test and live apart): what one upload finds includes every photo committed before
    it, and the photo of an upload still running is found by the next one, which waits for it.
    PostgreSQL: a transaction-level advisory lock on the company (a near copy need not share an
    exact band value, so a finer lock would let one slip through). SQLite: nothing to take, the
    upload's transaction holds the database's write lock from its start (`BEGIN IMMEDIATE`)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    name = f"photo_hashes:{company_id}:{'test' if testing else 'live'}".encode()
    key = int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "big", signed=True)
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def find(
    session: Session, company_id: str, testing: bool, inspection_id: str, new: tuple[int, int]
) -> list[DuplicateMatch]:
    """Photos of the company's other inspections within `NEAR_BITS` of `new` (whole, central
    crop), nearest first."""
    matches = []
    if session.get_bind().dialect.name == "postgresql":
        arguments = postgres_arguments(company_id, testing, inspection_id)
        lookup = postgres_lookup(new, measured=measures_in_postgres(session))
        rows: Any = session.execute(lookup, arguments)
    else:
        rows = session.execute(lookup_statement(company_id, testing, inspection_id, new))
    seen = set()
    for other_inspection, other_image, whole, center in rows:
        if other_image in seen:  # found through several bands
            continue
        seen.add(other_image)
        bits = nearest(new, (unsigned(whole), unsigned(center)))
        if bits <= NEAR_BITS:
            matches.append(DuplicateMatch(other_inspection, other_image, bits))
    matches.sort(key=lambda match: match.bits)
    return matches[:MAX_MATCHES]
