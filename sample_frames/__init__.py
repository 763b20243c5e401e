"""The bundled sample sessions (rendered tables with golden transcripts; see README.md here). A package only so
that they install with Tablesight: `tablesight serve` plays one even from a non-editable install."""
