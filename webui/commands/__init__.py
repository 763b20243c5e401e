"""One module per `tablesight` sub-command; each has `configure(parser)` and `run(args) -> exit status`."""

COMMANDS = (
    "serve",
    "calibrate",
    "calibrate-camera",
    "calibrate-mounts",
    "detect",
    "replay",
    "report",
    "judge",
    "tags",
    "mat",
    "map",
    "bench",
    "dice",
)
