"""Delivering the magic link to the consumer: by email (SMTP), SMS and WhatsApp (Twilio, Meta's
Cloud API), or to the development outbox; durable jobs, visible status, resends.
docs/delivery.md describes settings, providers, retries, the outbox and the events."""
