"""The HTTP routes, one router per page: live table, calibration, terrain, roster, replay, downloads."""
