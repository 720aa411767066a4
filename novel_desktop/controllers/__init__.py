"""controllers layer (see ARCHITECTURE.md)."""
