"""Templates: custom templates and their revisions (controller, service, tables)."""
