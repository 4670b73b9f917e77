"""The built site in headless Chromium: every page, every link and anchor, search, themes, looks.

Debian's Chromium (`apt-get install chromium`), driven by Playwright with
`executable_path`, never a browser Playwright downloads. The site is served
from site/ by a small HTTP server on 127.0.0.1; a request to any other host
fails the test, so does a console error, a broken link or a missing anchor.
Screenshots land in build/site-test/ for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import io
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image, ImageStat
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    ViewportSize,
    sync_playwright,
)
from playwright.sync_api import Request as BrowserRequest
from playwright.sync_api import Response as BrowserResponse
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
SHOTS = ROOT / "build" / "site-test"
BUILD_COMMAND = "python scripts/with_venv.py --site python scripts/build_site.py"
# The flags that keep Chromium from reaching for the network on its own, as root;
# and a proxy on a closed loopback port for every host but 127.0.0.1, so a page
# that asks for something elsewhere fails here (and the test says so) without a
# packet leaving the machine.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
]
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}


def chapter_one() -> str:
    texts = sorted((ROOT / "docs").glob("ch01-*.md"))
    assert texts, "docs/ has no chapter 1 text"
    return texts[0].stem + "/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"site/ is not built; run: {BUILD_COMMAND}")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).is_file():
        pytest.fail("Chromium is missing: install Debian's package (apt-get install chromium)")
    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh, empty --user-data-dir of its own.
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Watch:
    """What went wrong while pages of one browser context loaded."""

    base_url: str
    problems: list[str] = field(default_factory=list)
    current: str = ""

    def attach(self, context: BrowserContext) -> None:
        context.on("request", self.request)
        context.on("page", self.page)

    def page(self, page: Page) -> None:
        page.on("console", self.console)
        page.on("pageerror", lambda error: self.add(f"uncaught error: {error}"))
        page.on("response", self.response)
        page.on("requestfailed", self.failed)

    def add(self, problem: str) -> None:
        self.problems.append(f"{self.current}: {problem}")

    def request(self, request: BrowserRequest) -> None:
        if request.url.startswith(("data:", "blob:", "about:")):
            return
        if not request.url.startswith(self.base_url):
            self.add(f"loads from another host: {request.url}")

    def failed(self, request: BrowserRequest) -> None:
        # ERR_ABORTED: the test went on to the next page before this one finished loading.
        if request.failure != "net::ERR_ABORTED":
            self.add(f"request failed: {request.url} ({request.failure})")

    def console(self, message: ConsoleMessage) -> None:
        # A web worker's messages (Material's search runs in one) come here too.
        if message.type == "error":
            self.add(f"console error: {message.text}")

    def response(self, response: BrowserResponse) -> None:
        if response.status >= 400:
            self.add(f"HTTP {response.status} for {response.url}")


@dataclass
class Visited:
    ids: set[str]
    links: list[str]


def page_url_path(url: str) -> str:
    """The site file an internal URL is served from, relative to site/."""
    path = unquote(urlsplit(url).path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path


def every_page() -> list[str]:
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html"))


def test_every_page_loads_clean_and_every_link_and_anchor_exists(
    browser: Browser, base_url: str
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(base_url)
    watch.attach(context)
    page = context.new_page()
    visited: dict[str, Visited] = {}
    for path in every_page():
        watch.current = path
        url = base_url + (path.removesuffix("index.html"))
        page.goto(url, wait_until="load")
        found = page.evaluate(
            """() => ({
                ids: [...document.querySelectorAll('[id]')].map(e => e.id)
                    .concat([...document.querySelectorAll('a[name]')].map(e => e.name)),
                links: [...document.querySelectorAll('a[href]')].map(e => e.href),
            })"""
        )
        visited[path] = Visited(set(found["ids"]), list(found["links"]))
    page.wait_for_timeout(200)  # let the last page's late requests report
    context.close()

    problems = list(watch.problems)
    for path, seen in visited.items():
        for link in seen.links:
            if not link.startswith(base_url):
                continue  # another host: a link to follow, not something the page loads
            target = page_url_path(link)
            fragment = unquote(urlsplit(link).fragment)
            if not (SITE / target).is_file():
                problems.append(f"{path}: broken link {link} (no {target})")
            elif fragment and target in visited and fragment not in visited[target].ids:
                problems.append(f"{path}: missing anchor {link} (no id {fragment!r} on {target})")
            elif fragment and target not in visited:
                problems.append(f"{path}: anchor {link} points into {target}, which is not a page")
    assert len(visited) > 20, f"only {len(visited)} pages in site/"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:60])


def search(page: Page, word: str) -> list[str]:
    """Type into the search box as a person would, and return the results' links.

    Material's search starts in a web worker; a query typed before it is ready
    may be dropped, so this types again until results show (or 20 s pass).
    """
    box = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item > a")
    for _ in range(10):
        box.click()
        box.fill("")
        page.keyboard.type(word)
        try:
            results.first.wait_for(timeout=2_000)
        except PlaywrightTimeoutError:
            continue
        links: list[str] = results.evaluate_all("links => links.map(a => a.href)")
        return links
    return []


@pytest.mark.parametrize("word", ["智能体", "循环", "消息契约", "权限"])
def test_search_finds_chinese_words_in_the_texts(
    browser: Browser, base_url: str, word: str
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(base_url)
    watch.attach(context)
    page = context.new_page()
    page.goto(base_url + chapter_one())
    links = search(page, word)
    context.close()
    chapters = [link for link in links if re.search(r"/ch\d\d-[^/]+/", link)]
    assert chapters, f"searching {word!r} found no chapter text: {links}"
    assert not watch.problems, watch.problems


def test_the_palette_toggle_switches_between_light_and_dark(
    browser: Browser, base_url: str
) -> None:
    context = browser.new_context(viewport=DESKTOP, color_scheme="light")
    watch = Watch(base_url)
    watch.attach(context)
    page = context.new_page()
    page.goto(base_url + chapter_one())
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    assert page.evaluate(scheme) == "default"
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert page.evaluate(scheme) == "slate"
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "chapter-dark.png").write_bytes(page.screenshot())
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert page.evaluate(scheme) == "default"
    context.close()
    assert not watch.problems, watch.problems


def assert_not_blank(png: bytes, size: ViewportSize, name: str) -> None:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (size["width"], size["height"]), name
    colours = image.getcolors(maxcolors=size["width"] * size["height"]) or []
    most = max(count for count, _ in colours)
    spread = ImageStat.Stat(image.convert("L")).stddev[0]
    assert len(colours) >= 50, f"{name}: only {len(colours)} colours"
    assert most / (image.width * image.height) < 0.95, f"{name}: one colour covers the page"
    assert spread > 5, f"{name}: flat (grey-level standard deviation {spread:.1f})"


@pytest.mark.parametrize(
    ("name", "viewport"), [("chapter-desktop", DESKTOP), ("chapter-phone", PHONE)]
)
def test_a_chapter_page_renders_at_desktop_and_phone_width(
    browser: Browser, base_url: str, name: str, viewport: ViewportSize
) -> None:
    phone = viewport is PHONE
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    watch = Watch(base_url)
    watch.attach(context)
    page = context.new_page()
    page.goto(base_url + chapter_one(), wait_until="load")
    png = page.screenshot()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    abstract = page.locator(".admonition.abstract").first.inner_text()
    context.close()
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{name}.png").write_bytes(png)
    assert_not_blank(png, viewport, name)
    assert overflow <= 1, f"{name}: the page is {overflow}px wider than the screen"
    assert "Chapter 1" in abstract
    assert not watch.problems, watch.problems


@pytest.mark.parametrize("anchor", ["run_agent", "L12"])
def test_a_code_anchor_shows_its_line_marked(browser: Browser, base_url: str, anchor: str) -> None:
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{base_url}chapters/ch01/loop.py/#{anchor}")
    line = page.locator(".code-page .ln:target, .code-page .ln:has(> .sym:target)")
    assert line.count() == 1
    box = line.bounding_box()
    background = line.evaluate("e => getComputedStyle(e).backgroundColor")
    context.close()
    assert box is not None and 0 <= box["y"] < DESKTOP["height"], "the line is not in view"
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), "the line is not marked"
