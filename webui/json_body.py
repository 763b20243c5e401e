"""Reading a posted JSON document whose checks live in the domain (a roster, a terrain): 400 when it is not JSON."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from calibration.errors import InputError
from calibration.json_input import parse_json


class NotJson(InputError):
    """A request body that should be JSON and is not."""


async def json_body(request: Request, what: str) -> Any:
    return parse_json(await request.body(), what, "check the brackets, commas, quotes and numbers", NotJson)
