"""Providers carry a message to its destination. Each is one module with a class that has
`name`, `send(outgoing) -> provider message id` and `find_sent(outgoing) -> id | None`; adding a
provider is one module and one line in `server.delivery.providers.base.choose`."""
