"""llm layer (see ARCHITECTURE.md)."""
