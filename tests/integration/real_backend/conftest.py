"""Tests against the real control plane: the fixtures live in tests/integration/conftest.py."""
