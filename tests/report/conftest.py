"""Headless Chromium for the report tests, driven with the ``playwright`` Python package and
the system's browser (Debian's ``chromium`` package): playwright's own browser downloads are
never used.

The browser is found on the PATH (or at the Debian package's path); where it is missing and
the tests run as root with apt available, ``apt-get install -y chromium`` installs it. Where
neither works, the browser tests are skipped with a message saying why; the other report
tests still run.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DEBIAN_PATH = "/usr/bin/chromium"


def _find() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return DEBIAN_PATH if os.path.exists(DEBIAN_PATH) else None


def _install() -> str:
    """Install Debian's chromium; returns why it could not be done (empty when it was)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not running as root, so 'apt-get install -y chromium' cannot run"
    if shutil.which("apt-get") is None:
        return "apt-get is not available to install the 'chromium' package"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "install", "-y", "chromium"], ["apt-get", "update"],
                    ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if command[1] == "install" and done.returncode == 0:
            return ""
    return f"'apt-get install -y chromium' failed: {done.stderr.strip()[-300:]}"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = _find()
    if path is None:
        why = _install()
        path = _find()
        if path is None:
            pytest.skip(f"headless Chromium is needed for the browser tests of the report and "
                        f"is not installed ({why or 'installed, but not found afterwards'})")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the 'playwright' package drives Chromium in the "
        "browser tests of the report (pip install playwright; no browser download needed)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield launched
        launched.close()


class Visit:
    """A page of the report, with what it logged and requested."""

    def __init__(self, page, path) -> None:
        self.page = page
        self.errors: list[str] = []
        self.console: list[tuple[str, str]] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("dialog", self._dialog)
        self.url = path.resolve().as_uri()
        page.goto(self.url)
        page.wait_for_function("document.body.dataset.ready", timeout=60_000)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind in ("error", "warning")] + self.errors

    @property
    def other_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url]


@pytest.fixture
def open_report(browser):
    contexts = []

    def visit(path, width: int = 1280, height: int = 900) -> Visit:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        return Visit(context.new_page(), path)

    yield visit
    for context in contexts:
        context.close()
