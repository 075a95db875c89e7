"""Sample report data for tests and the benchmark: a completed car inspection with photos."""

from __future__ import annotations

import io
import random
from typing import Any

from PIL import Image, ImageDraw

from server.reports.renderer import ReportData, ReportImage

SIDES = ["front", "back", "left", "right", "dashboard", "plate"]
VALIDATIONS = ["plate", "color", "make", "model", "angle", "recaptured", "date", "distance"]


def photo(seed: int, size: tuple[int, int] = (1280, 960), quality: int = 85) -> bytes:
    """A JPEG photo-like image: smooth noise plus shapes, deterministic for a seed."""
    rng = random.Random(seed)
    small = Image.frombytes(
        "RGB", (size[0] // 8, size[1] // 8), rng.randbytes(size[0] // 8 * size[1] // 8 * 3)
    )
    image = small.resize(size, Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        w, h = rng.randrange(20, 300), rng.randrange(20, 300)
        color = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        if rng.random() < 0.5:
            draw.rectangle((x, y, x + w, y + h), fill=color)
        else:
            draw.ellipse((x, y, x + w, y + h), outline=color, width=6)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def image_record(index: int, validations_per_image: int) -> dict[str, Any]:
    names = [VALIDATIONS[(index + k) % len(VALIDATIONS)] for k in range(validations_per_image)]
    return {
        "_id": f"img{index:021d}",
        "templateImageIdentifier": f"image_0000000{index}-0000-4000-8000-000000000000",
        "side": SIDES[index % len(SIDES)],
        "target": "product",
        "type": "normal",
        "processed": True,
        "approved": index != 1,
        "uploadedAt": f"2026-11-20T10:0{index}:00Z",
        "src": f"https://example.test/{index}.jpg",
        "validations": [
            {
                "_id": f"v{index}{k}",
                "validation": name,
                "confidence": 90 - k,
                "valid": not (index == 1 and name == "plate"),
            }
            for k, name in enumerate(names)
        ],
        "damages": [{"part": "trunk", "percentage": 12, "damage": "dent", "severity": "minor"}]
        if index == 1
        else [],
        "attempt": 2 if index == 1 else 1,
        # What the photo was judged on (issue 23): photo 0 from its EXIF, the others declared.
        "capture": {
            "takenAt": f"2026-11-20T09:5{index}:00.000Z",
            "takenAtSource": "exif" if index == 0 else "browser",
            "latitude": -34.6037,
            "longitude": -58.3816,
            "locationSource": "exif" if index == 0 else "browser",
            "device": {"make": "samsung", "model": "SM-A515F", "software": "A515FXXU4CTJ1"}
            if index == 0
            else None,
        },
    }


def car_report(images: int = 6, validations: int = 30, with_bytes: bool = True) -> ReportData:
    """A disapproved car inspection with `images` photos and `validations` results in all."""
    per_image = max(1, validations // max(1, images))
    records = [image_record(i, per_image) for i in range(images)]
    inspection: dict[str, Any] = {
        "_id": "6650f1c2a1b2c3d4e5f60718",
        "type": "car",
        "status": "completed",
        "veredict": "disapproved",
        "completedBy": "client",
        "locale": "es_AR",
        "template": {
            "_id": "tpl000000000000000000001",
            "name": "Car underwriting",
            "type": "custom",
            "inputs": [
                {"identifier": "input_1", "label": "Mileage reading", "value": 42000},
                {"identifier": "input_2", "label": "Has GNC", "value": True},
            ],
        },
        "producer": {"companyId": "c1", "userId": "u1"},
        "metadata": {"policy": "P-1"},
        "identity": {
            "firstName": "Ana",
            "lastName": "Pérez",
            "identification": "30125678",
            "email": "ana@example.test",
        },
        "variables": [{"name": "score", "value": 7.5}, {"name": "note", "value": "ok"}],
        "globalValidations": [
            {
                "_id": "g1",
                "name": "plate_matches",
                "description": "Plate read matches",
                "valid": False,
            },
            {
                "_id": "g2",
                "name": "photos_recent",
                "description": "Photos are recent",
                "valid": True,
            },
        ],
        "products": [
            {
                "_id": "p1",
                "type": "car",
                "car": {
                    "plate": "AB123CD",
                    "make": "Toyota",
                    "model": "Corolla",
                    "year": 2019,
                    "color": "white",
                    "use": "private",
                    "milage": 42000,
                },
                "images": records,
            }
        ],
        "createdAt": "2026-11-20T09:58:00Z",
        "completedAt": "2026-11-20T10:10:00Z",
    }
    template = {
        "_id": "tpl000000000000000000001",
        "name": "Car underwriting",
        "logic": {
            "locales": ["en_US", "es_AR"],
            "inputs": {
                "input_1": {"name": "mileage", "translations": {"es_AR": {"label": "Kilometraje"}}},
            },
            "images": {},
        },
    }
    explanation = {
        "veredict": "disapproved",
        "reasons": ["The plate does not match the photo"],
        "verdict": [
            {
                "kind": "disapprove",
                "label": "The plate does not match the photo",
                "holds": True,
                "decided": True,
            },
            {
                "kind": "approve_when",
                "label": "Photos missing",
                "holds": False,
                "decided": False,
            },
        ],
        "ruleErrors": [{"code": "division_by_zero", "message": "score / count"}],
    }
    pictures = [
        ReportImage(record=r, content=photo(i) if with_bytes else None)
        for i, r in enumerate(records)
    ]
    return ReportData(
        inspection=inspection,
        template=template,
        explanation=explanation,
        company_name="ACME Seguros",
        images=pictures,
        generated_at="2026-11-20T10:15:00Z",
        report_request_id="rr1",
        time_zone="America/Argentina/Buenos_Aires",  # an Argentine company's setting
    )
