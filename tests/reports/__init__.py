"""Tests of reports, jobs, webhooks, events and URL safety (engineer R)."""
