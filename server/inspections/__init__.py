"""Inspections: creation, reads, lists, updates, presigned links and expiry (controllers,
services, tables)."""
