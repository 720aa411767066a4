"""analysis layer (see ARCHITECTURE.md)."""
