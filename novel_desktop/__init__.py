"""novel_desktop: write and maintain a long Chinese web novel with a pipeline of LLM agents."""

__version__ = "0.1.0"
