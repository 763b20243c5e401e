"""The application: the `tablesight` command line, session wiring, the SQLite store and the web server."""
