"""Test doubles: a fake Anthropic Messages API server."""
