"""Webhooks: subscriptions to inspection events, signed deliveries and their attempts
(controller, service, tables)."""
