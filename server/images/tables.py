"""The photos' perceptual hashes, for the `duplicate` validation's look-up across a company's
inspections (`server/images/duplicates.py`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, Integer
from sqlmodel import Field, SQLModel

from server.tables import timestamp_field

#: A 64-bit row id (SQLite numbers only an INTEGER PRIMARY KEY by itself).
ID_TYPE = BigInteger().with_variant(Integer(), "sqlite")

#: Columns holding the hash's bands: whole photo (`w0`-`w3`) and its central crop (`c0`-`c3`),
#: 16 bits each, highest first (`runtime.photohash.bands`).
BAND_COLUMNS = [f"w{index}" for index in range(4)] + [f"c{index}" for index in range(4)]
#: What a look-up reads, kept in each band index on PostgreSQL (`INCLUDE`): the look-up is
#: index-only scans, never a heap fetch per candidate.
INCLUDED_COLUMNS = ["testing", "inspection_id", "image_id", "phash", "phash_center"]


class PhotoHashRecord(SQLModel, table=True):
    """One uploaded photo's hashes (whole and central crop, signed 64-bit) and their bands,
    each band indexed after the company: the multi-index look-up of `duplicates.find`."""

    __tablename__ = "photo_hashes"
    __table_args__ = tuple(
        Index(
            f"ix_photo_hashes_{column}",
            "company_id",
            column,
            postgresql_include=INCLUDED_COLUMNS,
        )
        for column in BAND_COLUMNS
    )

    id: int | None = Field(default=None, sa_column=Column(ID_TYPE, primary_key=True))
    company_id: str = Field(max_length=64)
    testing: bool
    inspection_id: str = Field(max_length=24)
    image_id: str = Field(max_length=24)
    phash: int = Field(sa_column=Column(BigInteger(), nullable=False))
    phash_center: int = Field(sa_column=Column(BigInteger(), nullable=False))
    w0: int = Field(sa_column=Column(Integer(), nullable=False))
    w1: int = Field(sa_column=Column(Integer(), nullable=False))
    w2: int = Field(sa_column=Column(Integer(), nullable=False))
    w3: int = Field(sa_column=Column(Integer(), nullable=False))
    c0: int = Field(sa_column=Column(Integer(), nullable=False))
    c1: int = Field(sa_column=Column(Integer(), nullable=False))
    c2: int = Field(sa_column=Column(Integer(), nullable=False))
    c3: int = Field(sa_column=Column(Integer(), nullable=False))
    created_at: datetime = timestamp_field()
