"""Services: the storage side of each resource, between the controllers and the database.

A service loads what an operation needs, calls the pure runtime function, and saves the result
(state, indexed columns, events) in one transaction. Controllers never touch tables; services
never see HTTP.
"""

from __future__ import annotations
