"""The `duplicate` validation's look-up: has this photo (or a near copy: resized, recompressed,
cropped by a few percent) already been uploaded to another inspection of the company?

Every uploaded photo's perceptual hashes (`runtime.photohash`: the whole photo and its central
crop, 64 bits each) are kept in `photo_hashes`, cut in 4 bands of 16 bits, each band in its own
column indexed after the company (multi-index hashing). A look-up asks, per band, for the rows
whose band equals one of the new photo's band values or its one-bit neighbours (17 values per
band and hash): by the pigeonhole principle every stored photo within 7 bits of the new one
shares a band up to one bit, and one within 8-10 bits usually does. The few rows this returns
are then measured exactly (`runtime.photohash.nearest`, up to `NEAR_BITS`). At 1,000,000 stored
photos of one company on PostgreSQL a look-up takes a few milliseconds
(`benchmarks/bench_duplicates.py`, figures in docs/vision.md).

The runtime judges; this module only finds (`runtime.evidence.DuplicateValidator` gets the
matches through `ImageUpload.duplicates`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import select, union_all
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
    whole_probes, whole_bands, center_bands = probes(new[0]), bands(new[0]), bands(new[1])
    table = cast(Any, PhotoHashRecord)
    wanted = {}
    for index in range(4):
        wanted[f"w{index}"] = sorted(set(whole_probes[index]) | {center_bands[index]})
        wanted[f"c{index}"] = [whole_bands[index]]
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


def find(
    session: Session, company_id: str, testing: bool, inspection_id: str, new: tuple[int, int]
) -> list[DuplicateMatch]:
    """Photos of the company's other inspections within `NEAR_BITS` of `new` (whole, central
    crop), nearest first."""
    matches = []
    statement = lookup_statement(company_id, testing, inspection_id, new)
    seen = set()
    for other_inspection, other_image, whole, center in session.execute(statement):
        if other_image in seen:  # found through several bands
            continue
        seen.add(other_image)
        bits = nearest(new, (unsigned(whole), unsigned(center)))
        if bits <= NEAR_BITS:
            matches.append(DuplicateMatch(other_inspection, other_image, bits))
    matches.sort(key=lambda match: match.bits)
    return matches[:MAX_MATCHES]
