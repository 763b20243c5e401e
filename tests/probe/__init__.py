"""Tests from the outside probe's findings (issue "Nothing recorded is lost" and others)."""
