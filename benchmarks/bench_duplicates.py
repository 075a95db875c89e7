"""The `duplicate` look-up at 1,000,000 stored photos of one company on PostgreSQL (issue 23 §2:
under 20 ms a look-up), against a sequential scan measuring every stored hash (the look-up
without the band index), in the same run.

It migrates a throwaway schema (`photo_hashes` with its eight band indexes, migration 0008),
loads `BENCH_PHOTOS` (default 1,000,000) hash rows for one company through `COPY` (indexes
built after the load, then `ANALYZE`), and times `server.images.duplicates.find`, the code the
upload runs, through a SQLAlchemy session:

- `near`: a stored photo's hashes with 0-10 random bits flipped (a resized, recompressed or
  cropped copy): the look-up must find it (recall is printed for 0-7 bits, where the band
  probes guarantee it, and for 8-10);
- `new`: hashes that match nothing stored (most uploads);
- `crowded`: hashes near one of the dense clusters the load contains (half the stored photos
  are variations, 12-24 bits away, of 20,000 scenes: many photos of white cars in garages).

The hashes are synthetic (real photos hash the same way: `runtime.photohash`); their spread
follows what the 106 real photos show (docs/vision.md, "duplicate"). The last line is ONE JSON
object: `lookup_p50_ms`, `lookup_p95_ms` (target < 20; the whole call, from Python),
`database_p50_ms` (the database's own planning and execution of the look-up, EXPLAIN ANALYZE),
`scan_p50_ms` (a sequential scan measuring every stored hash), `speedup_vs_scan`,
`recall_0_7_bits` (must be 1.0), `recall_8_10_bits`, `candidates_p50` (band candidates the
index scans read per look-up; only those within `NEAR_BITS` leave the database), `load_1min`
(the machine's one-minute load average before and after the timed look-ups), `photos`.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_api import postgres_schema  # noqa: E402

PHOTOS = int(os.environ.get("BENCH_PHOTOS", "1000000"))
LOOKUPS = int(os.environ.get("BENCH_LOOKUPS", "200"))
SCENES = 20_000
COMPANY = "bench-company"


def flip(value: int, bits: int, rng: random.Random) -> int:
    for bit in rng.sample(range(64), bits):
        value ^= 1 << bit
    return value


def photo(rng: random.Random, scenes: list[int]) -> tuple[int, int]:
    """A stored photo's (whole, central crop) hashes: half uniform, half near a scene."""
    whole = (
        rng.getrandbits(64)
        if rng.random() < 0.5
        else flip(rng.choice(scenes), rng.randint(12, 24), rng)
    )
    return whole, flip(whole, rng.randint(2, 10), rng)


def load(url: str, rng: random.Random, scenes: list[int]) -> list[tuple[int, int]]:
    """COPY the rows, build the band indexes, ANALYZE; returns every stored (whole, center)."""
    import psycopg

    from runtime.photohash import signed
    from server.images.duplicates import band_values
    from server.images.tables import BAND_COLUMNS, INCLUDED_COLUMNS

    stored = [photo(rng, scenes) for _ in range(PHOTOS)]
    columns = ["company_id", "testing", "inspection_id", "image_id", "phash", "phash_center",
               *BAND_COLUMNS, "created_at"]  # fmt: skip
    now = datetime.now(UTC).isoformat()
    plain = url.split("?")[0]
    schema = url.split("search_path%3D")[1]
    with psycopg.connect(plain, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        for column in BAND_COLUMNS:
            connection.execute(f"DROP INDEX ix_photo_hashes_{column}")
        with connection.cursor().copy(
            f"COPY photo_hashes ({', '.join(columns)}) FROM STDIN"
        ) as copy:
            for index, (whole, center) in enumerate(stored):
                bands = band_values(whole, center)
                inspection = f"{index // 4:024x}"
                copy.write_row(
                    [COMPANY, True, inspection, f"{index:024x}", signed(whole), signed(center),
                     *(bands[column] for column in BAND_COLUMNS), now]
                )  # fmt: skip
        for column in BAND_COLUMNS:
            included = ", ".join(INCLUDED_COLUMNS)
            connection.execute(
                f"CREATE INDEX ix_photo_hashes_{column} ON photo_hashes (company_id, {column}) "
                f"INCLUDE ({included})"
            )
        connection.execute("VACUUM ANALYZE photo_hashes")
    return stored


def timed(function: object, *args: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args)  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    from sqlalchemy import text

    from runtime.photohash import NEAR_BITS, signed
    from server import migrate
    from server.db import Database
    from server.images import duplicates

    rng = random.Random(23)
    scenes = [rng.getrandbits(64) for _ in range(SCENES)]
    with postgres_schema() as url:
        if url is None:
            raise SystemExit("this benchmark needs PostgreSQL (BENCH_POSTGRES_URL)")
        database = Database(url)
        migrate.upgrade(database)
        started = time.perf_counter()
        stored = load(url, rng, scenes)
        print(f"loaded {PHOTOS:,} photos in {time.perf_counter() - started:.0f} s")
        queries: list[tuple[str, tuple[int, int], int | None]] = []
        for _ in range(LOOKUPS):
            target = rng.randrange(PHOTOS)
            whole, center = stored[target]
            bits = rng.randint(0, 10)
            queries.append(("near", (flip(whole, bits, rng), flip(center, bits, rng)), target))
            queries.append(("new", (rng.getrandbits(64), rng.getrandbits(64)), None))
            crowded = flip(rng.choice(scenes), rng.randint(12, 24), rng)
            queries.append(("crowded", (crowded, flip(crowded, 6, rng)), None))
        rng.shuffle(queries)
        load_before = os.getloadavg()[0]
        times: dict[str, list[float]] = {"near": [], "new": [], "crowded": []}
        found = {"0-7": [0, 0], "8-10": [0, 0]}
        with database.session() as session:
            duplicates.find(session, COMPANY, True, "none", queries[0][1])  # warm the cache
            for kind, hashes, target in queries:
                elapsed, matches = timed(duplicates.find, session, COMPANY, True, "none", hashes)
                times[kind].append(elapsed)
                if target is not None:
                    from runtime.photohash import nearest

                    bits = nearest(hashes, stored[target])
                    if bits <= NEAR_BITS:
                        bucket = found["0-7" if bits <= 7 else "8-10"]
                        bucket[1] += 1
                        wanted = f"{target:024x}"
                        bucket[0] += any(m.image_id == wanted for m in matches)  # type: ignore[attr-defined]
            # What the database itself spends (planning + execution, EXPLAIN ANALYZE), apart
            # from the round trip and Python: on a loaded machine the two differ most.
            inside = []
            candidates = []
            arguments = duplicates.postgres_arguments(COMPANY, True, "none")
            for _, hashes, _ in queries[:40]:
                lookup = duplicates.postgres_lookup(hashes).text
                explain = text("EXPLAIN (ANALYZE, FORMAT JSON) " + lookup)
                plan = session.execute(explain, arguments).scalar()
                top = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
                inside.append(top["Planning Time"] + top["Execution Time"])
                # The band candidates the index scans read (before measuring their distance).
                unmeasured = duplicates.postgres_lookup(hashes, measured=False)
                candidates.append(len(session.execute(unmeasured, arguments).all()))
            # The same question without the band index: measure every stored hash.
            scan = []
            for _, hashes, _ in queries[:7]:
                statement = text(
                    "SELECT image_id FROM photo_hashes WHERE company_id = :company "
                    "AND testing AND (bit_count((phash # :whole)::bit(64)) <= :near "
                    "OR bit_count((phash_center # :whole)::bit(64)) <= :near "
                    "OR bit_count((phash # :center)::bit(64)) <= :near)"
                )
                arguments = {"company": COMPANY, "whole": signed(hashes[0]),
                             "center": signed(hashes[1]), "near": NEAR_BITS}  # fmt: skip
                elapsed, _ = timed(
                    lambda query=statement, values=arguments: session.execute(query, values).all()
                )
                scan.append(elapsed)
        load_after = os.getloadavg()[0]
        database.dispose()
    every = sorted(t for values in times.values() for t in values)
    for kind, values in times.items():
        values.sort()
        print(f"{kind:8} p50 {statistics.median(values):6.2f} ms   "
              f"p95 {values[int(len(values) * 0.95)]:6.2f} ms")  # fmt: skip
    scan_p50 = statistics.median(scan)
    print(f"scan     p50 {scan_p50:6.2f} ms (a sequential scan of every stored hash)")
    print(f"database p50 {statistics.median(inside):6.2f} ms (planning + execution, EXPLAIN)")
    p50 = statistics.median(every)
    result = {
        "photos": PHOTOS,
        "lookups": len(every),
        "lookup_p50_ms": round(p50, 2),
        "lookup_p95_ms": round(every[int(len(every) * 0.95)], 2),
        "lookup_max_ms": round(every[-1], 2),
        "database_p50_ms": round(statistics.median(inside), 2),
        "scan_p50_ms": round(scan_p50, 1),
        "speedup_vs_scan": round(scan_p50 / p50, 1),
        "recall_0_7_bits": round(found["0-7"][0] / max(1, found["0-7"][1]), 3),
        "recall_8_10_bits": round(found["8-10"][0] / max(1, found["8-10"][1]), 3),
        "candidates_p50": statistics.median(candidates),
        "load_1min": [round(load_before, 2), round(load_after, 2)],
        "target_ms": 20,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
