"""Reading a posted JSON document whose checks live in the domain (a roster, a terrain): 400 when it is not JSON."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from calibration.errors import InputError


class NotJson(InputError):
    """A request body that should be JSON and is not."""


async def json_body(request: Request, what: str) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        where = f" (line {err.lineno}, column {err.colno})" if isinstance(err, json.JSONDecodeError) else ""
        raise NotJson(f"{what} is not valid JSON{where}; check the brackets, commas and quotes.") from None
