"""The synthetic table: a renderer with exact ground truth, and the scripted sample sessions built with it.

For tests, the bundled samples and `tablesight bench`; nothing at a real table depends on it."""
