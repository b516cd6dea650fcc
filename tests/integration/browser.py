"""Open the HTML reports in the system's headless Chromium (Debian's `chromium`, driven by playwright without
its own browser download) and look at them the way a reader does."""

from __future__ import annotations

import io
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

# The network is closed here: without these Chromium keeps dialling out (updates, sync, QUIC probes).
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions"]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Chromium is missing: `make test` (or `make chromium`) installs Debian's chromium package"
    return path


@contextmanager
def browser(profile_dir: Path):
    """A headless Chromium with a fresh profile directory."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(profile_dir), executable_path=chromium_path(), headless=True,
                                                    args=FLAGS, viewport={"width": 1280, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()


def open_page(ctx, path: Path):
    """The page at ``path``, with what it logged and fetched: ``(page, {"errors", "requests", "failed"})``."""
    page = ctx.new_page()
    log: dict = {"errors": [], "requests": [], "failed": []}
    page.on("console", lambda m: log["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("request", lambda r: log["requests"].append(r.url))
    page.on("requestfailed", lambda r: log["failed"].append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    return page, log


def picture_is_drawn(png: bytes) -> bool:
    """A screenshot that is not blank: varied pixels and many distinct colours."""
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))
    colours = {tuple(round(float(c), 2) for c in px[:3]) for row in pixels[::4] for px in row[::4]}
    return pixels.shape[0] > 100 and pixels.shape[1] > 100 and float(pixels.std()) > 0.05 and len(colours) > 20


def drawn_charts(page) -> list[str]:
    """Alt text of every chart image that loaded, has a size and is not blank on screen."""
    drawn = []
    images = page.locator("figure img")
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        loaded = img.evaluate("i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0")
        if loaded and img.is_visible() and picture_is_drawn(img.screenshot()):
            drawn.append(img.get_attribute("alt"))
    return drawn


def self_contained(log: dict) -> bool:
    """Nothing fetched but the page itself and its inline data: images, nothing failed, nothing logged."""
    return (not log["errors"] and not log["failed"]
            and all(url.startswith(("file:", "data:")) for url in log["requests"]))
