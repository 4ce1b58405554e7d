"""Node.js/V8 stack traces and warnings, read for ``errdex explain`` (issue #7).

Registered as recognisers of :mod:`errdex.match.parse` when imported (``parse`` imports this
module at its end). Formats:

* an uncaught error, with or without Node's location header (``/app/x.js:12``, the source
  line, a ``^`` marker, a blank line) and its ``Node.js v20…`` footer::

      TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string.
          at Object.openSync (node:fs:571:10)
          at Command.parse (/app/node_modules/commander/lib/command.js:1034:10) {
        code: 'ERR_INVALID_ARG_TYPE',
        [cause]: Error: …
      }

  frames ``at fn (path:line:col)``, ``at async fn (…)``, ``at new Foo (…)``, bare
  ``at path:line:col``, ``at Array.forEach (<anonymous>)``, ``eval at …`` locations;
  ``file://`` and ``http(s)://host`` prefixes are stripped from paths (``node:internal/…``
  paths are kept), Windows paths kept; the ``[cause]:``/``cause:`` errors of the property
  block come before the error they caused, each with its own frames;
* ``Uncaught Error: …`` and ``Uncaught (in promise) TypeError: …`` (browsers, the REPL),
  ``Uncaught:``/``Thrown:`` before the error;
* process warnings: ``(node:1234) [DEP0005] DeprecationWarning: …``.

The code in ``[ERR_X]`` or a ``code: 'ERR_X'`` property is read but not kept:
:class:`~errdex.match.parse.ParsedError` has no field for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from errdex.match.parse import (
    MAX_FRAMES,
    POSSESSIVE,
    Block,
    Frame,
    ParsedError,
    Recogniser,
    Scan,
    register_recogniser,
)

__all__ = ["frame_location", "read_node_trace", "read_node_warning"]

_NAME = r"[A-Z_$][\w$]{0,200}"
"""An error class name: capitalised, as every built-in and almost every custom one is."""
_HEADER = re.compile(
    rf"(?P<uncaught>Uncaught (?:\(in promise\) )?)?(?P<cls>{_NAME})"
    r"(?: \[(?P<code>[^\]\n]{1,100})\])?(?::[ \t]?(?P<msg>.*))?\Z"
)
_FRAME = re.compile(
    r"[ \t]+at (?:(?P<func>[^\s()][^()\n]*?) \((?P<loc>[^\n]*)\)"
    r"|(?P<bare>[^\s(][^\n]*?:\d+(?::\d+)?))[ \t]*(?P<brace>\{)?\Z"
)
_OMITTED = re.compile(r"[ \t]+\.\.\. (\d+) (?:more )?lines? matching")
_LOCATION_HEADER = re.compile(r"(?P<path>[^\s][^\n]*?):(?P<line>\d{1,9})\Z")
_CARET = re.compile(r"[ \t]*\^+[ \t]*\Z")
_LINE_COLUMN = re.compile(r":(?P<line>\d{1,9})(?::\d{1,9})?\Z")
_EVAL = re.compile(r"eval at [^()\n]*\((?P<inner>[^()\n]*)\)")
_SCHEME = re.compile(r"[a-z][\w+.-]*://[^/\n]*")
_CAUSE = re.compile(r"(?P<indent>[ \t]*)(?:\[cause\]|cause): (?P<rest>.*)\Z")
_CODE = re.compile(r"[ \t]*code: '(?P<code>[^'\n]{1,100})',?\Z")
_FOOTER = re.compile(r"Node\.js v\d|\(Use `node --trace-")
_WARNING = re.compile(
    rf"\(node:\d+\) (?:\[(?P<code>[^\]\n]{{1,100}})\] )?(?P<cls>{_NAME}): (?P<msg>.*)\Z"
)
_PREFIXES = ("Uncaught:", "Thrown:")
_MAX_DEPTH = 8
_MAX_MESSAGE_LINES = 60
"""A header followed by more lines than this before its first frame is not a V8 trace."""


def frame_location(location: str) -> tuple[str, int | None]:
    """Split a V8 frame location into (path, line).

    ``file:///app/x.mjs:3:9`` → ``/app/x.mjs``, 3; ``https://host/static/app.js:10:5`` →
    ``/static/app.js``, 10; ``eval at f (/app/x.js:3:5), <anonymous>:1:1`` → the place of the
    ``eval``; ``<anonymous>``, ``native`` and ``index 0`` have no line.
    """
    evaluated = _EVAL.search(location)
    if evaluated is not None:
        location = evaluated["inner"]
    match = _LINE_COLUMN.search(location)
    line = int(match["line"]) if match is not None else None
    path = location[: match.start()] if match is not None else location
    scheme = _SCHEME.match(path)
    if scheme is not None:
        path = path[scheme.end() :].split("?", 1)[0].split("#", 1)[0]
        if re.match(r"/[A-Za-z]:/", path):
            path = path[1:]  # file:///C:/app/x.js
        path = path.replace("/./", "/")
    return path, line


def _function(name: str) -> str:
    name = name.strip()
    if name.startswith("async "):
        name = name[len("async ") :]
    return re.sub(r" \[as [^\]]*\]\Z", "", name)


@dataclass
class _Error:
    """One error being read: its header, message lines, frames and causes."""

    cls: str | None
    message: list[str]
    frames: list[Frame] = field(default_factory=list)
    omitted: int = 0
    causes: list[ParsedError] = field(default_factory=list)
    code: str | None = None

    def build(self, relation: str | None, fallback: Frame | None) -> list[ParsedError]:
        frames = list(reversed(self.frames)) or ([fallback] if fallback else [])
        omitted = self.omitted
        if len(frames) > MAX_FRAMES:
            omitted += len(frames) - MAX_FRAMES
            frames = frames[-MAX_FRAMES:]
        message = "\n".join(self.message).strip()
        return [
            *self.causes,
            ParsedError(
                error_class=self.cls,
                qualified_class=self.cls,
                message=message,
                frames=tuple(frames),
                relation="cause" if self.causes else relation,
                truncated=message.endswith(("...", "…")),
                language="javascript",
                omitted_frames=omitted,
            ),
        ]


def _frame(line: str) -> tuple[Frame, bool] | None:
    """Read a frame line: the frame, and whether it opens a property block (`` {``)."""
    match = _FRAME.match(line)
    if match is None:
        return None
    if match["bare"] is not None:
        path, number = frame_location(match["bare"])
        return Frame(path, number, None), match["brace"] is not None
    path, number = frame_location(match["loc"])
    return Frame(path, number, _function(match["func"])), match["brace"] is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _read_error(lines: list[str], start: int, text: str, depth: int) -> tuple[_Error, int] | None:
    """Read one error whose header text (``Error: …``) is on line ``start``.

    Returns the error and the index of the first line after it (its frames and property
    block included), or None when no frame follows the header.
    """
    header = _HEADER.match(text)
    if header is None:
        return None
    error = _Error(header["cls"], [header["msg"] or ""], code=header["code"])
    base = _indent(lines[start])
    i = start + 1
    count = len(lines)
    blank = 0
    while i < count and _frame(lines[i]) is None:
        # A message may span lines (blank ones too), but frames follow it closely.
        blank = blank + 1 if not lines[i].strip() else 0
        if blank >= 2 or len(error.message) >= _MAX_MESSAGE_LINES or _CARET.match(lines[i]):
            return None
        error.message.append(lines[i])
        i += 1
    opened = False
    while i < count:
        line = lines[i]
        read = _frame(line)
        if read is not None:
            error.frames.append(read[0])
            opened = read[1]
            i += 1
            continue
        omitted = _OMITTED.match(line)
        if omitted is not None:
            error.omitted += int(omitted[1])
            i += 1
            continue
        break
    if not error.frames:
        return None
    if opened:
        i = _read_properties(lines, i, base, error, depth)
    return error, i


def _read_properties(lines: list[str], start: int, base: int, error: _Error, depth: int) -> int:
    """Read an error's ``{ code: …, [cause]: … }`` block; return the line after its ``}``."""
    i = start
    count = len(lines)
    while i < count:
        line = lines[i]
        stripped = line.strip()
        if stripped == "}" and _indent(line) <= base:
            return i + 1
        code = _CODE.match(line)
        if code is not None:
            error.code = error.code or code["code"]
            i += 1
            continue
        cause = _CAUSE.match(line)
        if cause is not None and depth < _MAX_DEPTH:
            found = _read_error(lines, i, cause["rest"], depth + 1)
            if found is not None:
                inner, i = found
                error.causes = inner.build(None, None)
                continue
        if not stripped and i + 1 < count and not lines[i + 1].startswith((" ", "\t", "}")):
            return i
        i += 1
    return i


def read_node_trace(scan: Scan, start: int, floor: int) -> Block | None:
    """Read an uncaught Node.js/V8 error (see the module docstring) starting at a line."""
    lines = scan.lines
    count = len(lines)
    i = start
    if i + 1 == count and not lines[i].lstrip().startswith("Uncaught "):
        # The last line (a one-line paste): a location needs its caret line, and an error
        # its frames; only ``Uncaught …`` is read alone. ``Class: message`` (the commonest
        # paste) is told here, before the expressions below.
        return None
    location: Frame | None = None
    header_line = _LOCATION_HEADER.match(lines[i])
    caret = next((j for j in range(i + 1, min(count, i + 4)) if _CARET.match(lines[j])), None)
    if header_line is not None and caret is None and not _HEADER.match(lines[i]):
        return None
    if header_line is not None and caret is not None:
        j = caret
        path, _ = frame_location(header_line["path"] + ":0")
        location = Frame(path, int(header_line["line"]), None, lines[i + 1].strip() or None)
        j += 1
        while j < count and not lines[j].strip():
            j += 1
        if j >= count:
            return None
        i = j
    text = lines[i].strip()
    if text in _PREFIXES and i + 1 < count:
        i += 1
        text = lines[i].strip()
    header = _HEADER.match(text)
    if header is None:
        if location is None:
            return None
        # A thrown value that is not an error (``throw "boom"``): Node prints it as is.
        error = _Error(None, [text])
        end = i + 1
    else:
        if header["uncaught"] is None and location is None and i + 1 == count:
            # ``Class: message`` alone (the most common paste): no line is left for the
            # frames a Node error needs, so there is nothing to read.
            return None
        found = _read_error(lines, i, text, 0)
        if found is None:
            if header["uncaught"] is None and location is None:
                return None
            if header["msg"] is None and header["uncaught"] is None:
                return None
            error = _Error(header["cls"], [header["msg"] or ""], code=header["code"])
            end = i + 1
        else:
            error, end = found
    while end < count and (not lines[end].strip() or _FOOTER.match(lines[end])):
        if lines[end].strip() and lines[end].startswith("Node.js v"):
            end += 1
            break
        end += 1
    while end > i + 1 and not lines[end - 1].strip():
        end -= 1
    return Block(start, end, "traceback", error.build(None, location))


def read_node_warning(scan: Scan, start: int, floor: int) -> Block | None:
    """Read a Node.js process warning (``(node:1234) [DEP0005] DeprecationWarning: …``)."""
    lines = scan.lines
    match = _WARNING.match(lines[start].strip())
    if match is None:
        return None
    error = _Error(match["cls"], [match["msg"]], code=match["code"])
    end = start + 1
    while end < len(lines):
        read = _frame(lines[end])
        if read is None:
            break
        error.frames.append(read[0])
        end += 1
    if end < len(lines) and lines[end].startswith("(Use `node --trace-warnings"):
        end += 1
    (warning,) = error.build(None, None)
    warning = ParsedError(
        error_class=warning.error_class,
        qualified_class=warning.qualified_class,
        message=warning.message,
        frames=warning.frames,
        language="javascript",
        level="WARNING",
    )
    return Block(start, end, "log", [warning])


register_recogniser(
    Recogniser("node-warning", r"[ \t]*\(node:\d+\) ", read_node_warning),
    before="python-warning",
)
register_recogniser(
    Recogniser(
        "node-trace",
        r"(?:Uncaught |Thrown:|Uncaught:)"
        # The name's run is possessive where Python can: what may follow it is not part of a
        # name, so a line that is no such name fails without trying every shorter run.
        rf"|[ \t]*{_NAME}{POSSESSIVE}(?: \[[^\]]+\])?(?::(?: |\Z)|\Z)"
        r"|[^\s][^\n]*:\d+\Z",
        read_node_trace,
    ),
    before="python-warning",
)
