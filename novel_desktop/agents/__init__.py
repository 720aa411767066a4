"""agents layer (see ARCHITECTURE.md)."""
