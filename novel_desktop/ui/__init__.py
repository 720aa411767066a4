"""Windows, views and dialogs (PySide6). Views read and write through controllers only."""
