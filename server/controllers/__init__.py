"""HTTP controllers, one module per resource; each exposes `ROUTES` (handlers or Controllers).

`create_app` includes the routes of every module listed in `CONTROLLER_MODULES` that exists, so
the parts of the server can be built (and tested) one at a time.
"""

from __future__ import annotations

import importlib
from typing import Any

CONTROLLER_MODULES = ["templates", "inspections", "images", "presign", "reports", "webhooks"]


def load_routes() -> list[Any]:
    """The `ROUTES` of every controller module present, in `CONTROLLER_MODULES` order."""
    routes: list[Any] = []
    for name in CONTROLLER_MODULES:
        module_name = f"{__name__}.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                continue  # not written yet
            raise
        routes.extend(module.ROUTES)
    return routes
