"""Latest-frame-wins broadcasting: a slow watcher skips frames and never slows the producer."""

from __future__ import annotations

import asyncio
import threading
import time

from session.broadcast import Broadcast


def test_slow_watcher_gets_the_newest_frame_and_never_blocks_the_producer() -> None:
    hub = Broadcast()
    seen: list[int] = []

    async def slow_watcher(started: threading.Event) -> None:
        agen = hub.watch()
        task = asyncio.ensure_future(agen.__anext__())
        await asyncio.sleep(0.05)
        started.set()
        first = await task
        seen.append(first.seq)
        async for item in agen:
            seen.append(item.seq)
            await asyncio.sleep(0.05)  # a phone on weak Wi-Fi
            if item.seq >= 200:
                break

    started = threading.Event()
    t = threading.Thread(target=lambda: asyncio.run(slow_watcher(started)))
    t.start()
    started.wait(5)
    t0 = time.perf_counter()
    for i in range(200):
        hub.publish("frame", f'{{"i": {i}}}', b"\xff\xd8jpeg")
        time.sleep(0.001)
    produce_s = time.perf_counter() - t0
    t.join(10)
    assert produce_s < 5.0  # 200 publishes (10 s if each waited for the watcher) are not held up by a watcher that takes 50 ms per frame
    assert seen[-1] == 200  # the newest frame always arrives
    assert len(seen) < 60  # and most of the ones in between were skipped
    assert seen == sorted(seen)


def test_a_status_never_hides_the_frame_before_it() -> None:
    hub = Broadcast()

    async def watch() -> list[str]:
        agen = hub.watch()
        task = asyncio.ensure_future(agen.__anext__())
        await asyncio.sleep(0.01)
        hub.publish("frame", "f1", b"jpeg")
        hub.publish("status", "paused")
        got = [(await task).text, (await agen.__anext__()).text]
        await agen.aclose()
        return got

    assert asyncio.run(watch()) == ["f1", "paused"]
    assert hub.latest_frame is not None and hub.latest_frame.text == "f1"
