"""pipeline layer (see ARCHITECTURE.md)."""
