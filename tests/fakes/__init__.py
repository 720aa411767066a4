"""Test doubles: a fake Anthropic Messages API server, recorded alerts and an in-memory keyring."""
