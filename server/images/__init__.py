"""Images: uploads, their signed content links and external validation results (controller,
service, tables)."""
