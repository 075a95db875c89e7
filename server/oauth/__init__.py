"""Partner applications through OAuth 2.0: registration, consent, tokens (docs/api.md)."""
