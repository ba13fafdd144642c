"""Checks on a report page that more than one test makes."""

from __future__ import annotations

#: Which of ``words``, written by the page itself, are laid out right to left somewhere: the
#: characters of one line must go from left to right, as they do unless a name's bidi
#: characters (U+202E, right-to-left override) reach past the name into the page's text.
_BACKWARDS = """words => {
    const found = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    while (walker.nextNode()) {
        const node = walker.currentNode;
        for (const word of words) {
            const at = node.textContent.indexOf(word);
            if (at < 0) continue;
            let last = null;
            for (let i = at; i < at + word.length; i++) {
                range.setStart(node, i);
                range.setEnd(node, i + 1);
                const box = range.getBoundingClientRect();
                if (!box.width) continue;  // a space, or hidden
                if (last && Math.abs(box.top - last.top) < 1 && box.left < last.left) {
                    found.push(`${word} in ${node.parentElement.localName}: ${node.textContent}`);
                    break;
                }
                last = box;
            }
        }
    }
    return found;
}"""


def backwards(page, words: list[str]) -> list[str]:
    """Where the page shows one of ``words`` (its own text) right to left."""
    return page.evaluate(_BACKWARDS, words)
