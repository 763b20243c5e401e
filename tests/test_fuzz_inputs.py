"""Property-based and schema-driven tests, bounded in time: the JSON reader, the field reader and the image
header check never fail any other way than with their one sentence, and no request the HTTP API's own
OpenAPI schema allows (or nearly allows: schemathesis also sends values outside it) gets a 500 from the
real server."""

from __future__ import annotations

import json
import math
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.decode import MAX_DECODE_PIXELS, ImageTooLarge, image_size, imdecode
from calibration.errors import InputError
from calibration.json_input import MAX_DEPTH, parse_json
from rules.fields import number, require, whole
from tests.webui_server import SAME_ORIGIN, running_server, session_settings
from tests.webui_session import make_session

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


@FUZZ
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_text_is_a_value_or_one_sentence(text: str | bytes) -> None:
    try:
        parse_json(text, "The file x.json")
    except InputError as err:
        message = str(err)
        assert message.startswith("The file x.json") and message.endswith(".") and "\n" not in message


@FUZZ
@given(json_values)
def test_a_json_value_round_trips_unless_it_holds_a_number_json_cannot(value: Any) -> None:
    text = json.dumps(value)  # writes NaN and Infinity as a careless tool would
    if _finite(value):
        assert parse_json(text, "v") == value
    else:
        with pytest.raises(InputError, match="which is not a number"):
            parse_json(text, "v")


@FUZZ
@given(st.integers(min_value=1, max_value=3000), st.sampled_from(["[", '{"a":']))
def test_nesting_is_refused_past_the_limit(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * depth + "1" + closer * depth
    if depth <= MAX_DEPTH:
        parse_json(text, "v")
    else:
        with pytest.raises(InputError, match=f"deeper than {MAX_DEPTH} levels"):
            parse_json(text, "v")


@FUZZ
@given(json_values, st.sampled_from([int, float, (int, float), str, list, dict]))
def test_the_field_reader_returns_the_kind_or_one_sentence(value: Any, kind: Any) -> None:
    class Bad(ValueError):
        pass

    for check in (lambda: require({"k": value}, "k", kind, "unit 12", Bad),
                  lambda: number(value, "unit 12: tag_in", Bad, low=0, high=12),
                  lambda: whole(value, "unit 12: tag", Bad, low=0, high=586)):
        try:
            got = check()
        except Bad as err:
            assert str(err).startswith("unit 12") and str(err).endswith(".")
        else:
            assert not isinstance(got, bool) or kind is not int


def _png(width: int, height: int, rows: bytes = b"") -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@FUZZ
@given(st.integers(1, 2**31 - 1), st.integers(1, 2**31 - 1))
def test_a_png_header_over_the_limit_is_refused_before_decoding(width: int, height: int) -> None:
    data = _png(width, height, b"\0" * 64)
    assert image_size(data) == (width, height)
    if width * height > MAX_DECODE_PIXELS:
        with pytest.raises(ImageTooLarge) as err:
            imdecode(data, cv2.IMREAD_GRAYSCALE)
        assert err.value.size == (width, height)


_SEED_IMAGES = [cv2.imencode(ext, np.random.default_rng(3).integers(0, 255, (24, 32, 3), np.uint8))[1].tobytes()
                for ext in (".png", ".jpg", ".bmp", ".webp", ".tiff")]


@FUZZ
@given(st.sampled_from(_SEED_IMAGES), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=8),
       st.integers(0, 10**6))
def test_a_damaged_image_decodes_or_is_none_or_too_large(seed: bytes, flips: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(seed)
    for at, value in flips:
        data[at % len(data)] = value
    data = data[: max(1, cut % (len(data) + 1))]
    try:
        image = imdecode(bytes(data), cv2.IMREAD_COLOR)
    except ImageTooLarge as err:
        assert err.size is None or err.size[0] * err.size[1] > MAX_DECODE_PIXELS
        return
    assert image is None or (image.ndim == 3 and image.shape[0] * image.shape[1] <= MAX_DECODE_PIXELS)


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes_decode_or_are_none(data: bytes) -> None:
    try:
        image = imdecode(data, cv2.IMREAD_UNCHANGED)
    except ImageTooLarge:
        return
    assert image is None or isinstance(image, np.ndarray)


# ------------------------------------------------------------------------------------- the HTTP API

API_SECONDS = 30.0
"""The schema-driven run's time budget, spread over the operations."""
ENDLESS = {"/api/live/stream.mjpg", "/api/live/overlay.mjpg", "/api/replay/{name}/stream.mjpg"}
"""Streams that never end: their headers are checked by other tests."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("fuzz-sessions")
    make_session(root / "table1")
    settings_ = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"))
    with running_server(settings_) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.mark.slow
def test_no_request_the_schema_describes_gets_a_500(served: tuple[str, Any]) -> None:
    import requests
    import schemathesis
    from schemathesis.core.result import Ok

    url, app = served
    schema = schemathesis.openapi.from_dict(app.openapi())
    results = list(schema.get_all_operations())
    operations = [r.ok() for r in results if isinstance(r, Ok)]
    assert len(operations) == len(results), [r.err() for r in results if not isinstance(r, Ok)]
    operations = [op for op in operations if op.path not in ENDLESS]
    assert len(operations) >= 25, [op.path for op in operations]
    budget = API_SECONDS / len(operations)
    failures: list[str] = []
    calls = 0
    with requests.Session() as session:
        clock = {"started": 0.0}
        for op in operations:
            clock["started"] = time.monotonic()

            @settings(max_examples=25, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(case=op.as_strategy())
            def one(case: Any) -> None:
                nonlocal calls
                if time.monotonic() - clock["started"] > budget:
                    return
                calls += 1
                response = case.call(base_url=url, session=session, headers=SAME_ORIGIN, timeout=20)
                if response.status_code >= 500 and response.status_code != 503:
                    failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: "
                                    f"{response.text[:200]}")

            one()
    print(f"\nschemathesis: {calls} requests over {len(operations)} operations, {len(failures)} 5xx")
    assert calls >= len(operations)
    assert not failures, failures[:5]
    assert Path(app.state.settings.sessions_dir).is_dir()
