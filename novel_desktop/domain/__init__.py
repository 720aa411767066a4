"""Pydantic models of every seed data format and the pure rules over them.

Imports nothing of ours outside ``domain`` and nothing of Qt.
"""
