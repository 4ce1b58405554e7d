"""The JavaScript and TypeScript extractors: message forms, classes, helpers, cross-file links,
TypeScript syntax, broken files, and real npm packages (checked against their sources)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from corpus import npm_package

from errdex.errors import ExtractionError
from errdex.extract import extractors
from errdex.extract.files import DirectorySource, SourceFile
from errdex.extract.javascript import JavaScriptExtractor, TypeScriptExtractor, unescape
from errdex.models import FileResult, Location, RaiseSite, Severity, SiteKind, SourceInfo

Extractor = JavaScriptExtractor | TypeScriptExtractor


def extract(files: dict[str, str], extractor: Extractor | None = None) -> list[FileResult]:
    extractor = extractor or JavaScriptExtractor()
    return [
        extractor.extract(SourceFile(path, textwrap.dedent(source).encode()))
        for path, source in files.items()
    ]


def mine(files: dict[str, str], *, typescript: bool = False) -> list[RaiseSite]:
    extractor: Extractor = TypeScriptExtractor() if typescript else JavaScriptExtractor()
    return extractor.link(extract(files, extractor))


def at(sites: list[RaiseSite], line: int, path: str | None = None) -> list[RaiseSite]:
    return [s for s in sites if s.line == line and (path is None or s.path == path)]


def one(sites: list[RaiseSite], line: int, path: str | None = None) -> RaiseSite:
    found = at(sites, line, path)
    assert len(found) == 1, [(s.path, s.line, s.template.text) for s in found]
    return found[0]


def texts(sites: list[RaiseSite], line: int) -> list[str]:
    return sorted(s.template.text for s in at(sites, line))


def summary(site: RaiseSite) -> tuple[str, str, str, str]:
    return site.kind.value, site.error_class, site.form, site.template.text


# -- registry ----------------------------------------------------------------------------------


def test_both_languages_are_registered_by_suffix():
    chosen = {e.language: e for e in extractors(window=5)}
    assert chosen["javascript"].suffixes == (".js", ".mjs", ".cjs", ".jsx")
    assert chosen["typescript"].suffixes == (".ts", ".mts", ".cts", ".tsx")
    assert [e.language for e in extractors(window=5, languages=["typescript"])] == ["typescript"]


# -- forms at the site -------------------------------------------------------------------------


def test_throw_forms_and_their_form_names():
    sites = mine(
        {
            "m.js": r"""
            function f(a, b) {
              throw new Error("plain 'quoted' \"text\"");
              throw new TypeError(`expected ${a} but got ${typeof b}`);
              throw new RangeError('value ' + a + ' out of range (' + b.min + '..' + b.max + ')');
              throw Error('no new: ' + a);
              throw new SyntaxError(`no holes`);
              throw new Error(a);
              throw new Error();
              throw new Error(`${a}` + ' and ' + `${b}!`);
            }
            """
        }
    )
    assert summary(one(sites, 3)) == ("raise", "Error", "literal", "plain 'quoted' \"text\"")
    assert summary(one(sites, 4)) == (
        "raise",
        "TypeError",
        "template",
        "expected {a} but got {typeof b}",
    )
    assert summary(one(sites, 5)) == (
        "raise",
        "RangeError",
        "concat",
        "value {a} out of range ({b.min}..{b.max})",
    )
    assert summary(one(sites, 6)) == ("raise", "Error", "concat", "no new: {a}")
    assert summary(one(sites, 7)) == ("raise", "SyntaxError", "literal", "no holes")
    assert summary(one(sites, 8)) == ("raise", "Error", "opaque", "{a}")
    assert summary(one(sites, 9)) == ("raise", "Error", "empty", "")
    assert summary(one(sites, 10)) == ("raise", "Error", "concat", "{a} and {b}!")
    site = one(sites, 4)
    assert (site.function, site.function_start, site.function_end) == ("f", 2, 11)
    assert site.message_line == 4
    assert site.language == "javascript"


def test_string_escapes_are_unescaped_as_javascript_does():
    sites = mine(
        {
            "m.js": r"""
            throw new Error('tab\there\nnew line \x41\u00e9\u{1F600}\ud83d\ude00 \'q\' \\ \q \0 \
            continued');
            throw new Error(`raw
            line \${not a hole} \` ${x}`);
            """
        }
    )
    assert one(sites, 2).template.text == (
        "tab\there\nnew line Aé\U0001f600\U0001f600 'q' \\ q \0 continued"
    )
    assert [p.text for p in one(sites, 4).template.parts] == [
        "raw\nline ${not a hole} ` ",
        "x",
    ]
    assert unescape(r"\x4") == "x4"


def test_errors_handed_on_are_sites_at_the_call():
    sites = mine(
        {
            "m.js": """
            function f(x, cb, next, reject) {
              cb(new Error('callback ' + x));
              next(new TypeError(`bad request ${x}`));
              reject(
                new RangeError('too big'));
              return Promise.reject(new Error('rejected'));
              emitter.emit('error', new Error('emitted'));
              stream.destroy(new Error('destroyed'));
              foo(new Map());
              const e = new Error();
              return new NotFoundError('factory');
            }
            """
        }
    )
    assert texts(sites, 3) == ["callback {x}"]
    assert one(sites, 4).error_class == "TypeError"
    assert one(sites, 5).template.text == "too big"  # the call's line, not the error's
    assert [one(sites, n).template.text for n in (7, 8, 9)] == ["rejected", "emitted", "destroyed"]
    assert at(sites, 10) == []  # not an error
    assert at(sites, 11) == []  # Error() without a message, kept for its stack
    assert summary(one(sites, 12)) == ("raise", "NotFoundError", "literal", "factory")


def test_a_message_variable_gives_one_site_per_reachable_value():
    sites = mine(
        {
            "m.js": """
            function f(a, b, kind) {
              let msg = 'unused default';
              if (a) {
                msg = `first ${a}`;
              } else if (b) {
                msg = 'second ' + b;
              }
              msg += '!';
              throw new Error(msg);
            }
            function g(a) {
              const text = `only ${a}`;
              throw new Error(text);
            }
            function h(a) {
              let m = 'start';
              m = 'replaced ' + a;
              throw new Error(m);
            }
            function i(a) {
              let m;
              switch (a) {
                case 1: m = 'one'; break;
                default: m = 'other';
              }
              throw new Error(m);
            }
            """
        }
    )
    assert texts(sites, 10) == ["first {a}!", "second {b}!", "unused default!"]
    assert {s.form for s in at(sites, 10)} == {"variable"}
    assert texts(sites, 14) == ["only {a}"]
    assert texts(sites, 19) == ["replaced {a}"]
    assert texts(sites, 27) == ["one", "other"]


def test_module_constants_and_inlined_literals():
    sites = mine(
        {
            "m.js": """
            const MESSAGE = 'the thing failed';
            const PREFIX = 'thing';
            const label = 'never changes';
            function f(a) {
              throw new Error(MESSAGE);
              throw new Error(`${PREFIX}: ${a} (${label})`);
            }
            """
        }
    )
    site = one(sites, 6)
    assert summary(site) == ("raise", "Error", "constant", "the thing failed")
    assert site.defined_at == Location(path="m.js", line=2)
    assert one(sites, 7).template.text == "thing: {a} (never changes)"


def test_error_codes_and_statuses_set_on_the_error_before_it_is_thrown():
    sites = mine(
        {
            "m.js": """
            function f(path) {
              const err = new Error('cannot open ' + path);
              err.code = 'ENOENT';
              err.status = err.statusCode = 404;
              throw err;
            }
            function g() {
              throw Object.assign(new Error('aborted'), { code: 'ECONNABORTED' });
            }
            function h() {
              throw new AppError('denied', { code: 'ERR_DENIED', cause: e });
            }
            function k() {
              throw new HttpError(403, 'forbidden');
            }
            """
        }
    )
    site = one(sites, 3)
    assert (site.error_code, site.http_status, site.kind) == ("ENOENT", 404, SiteKind.HTTP)
    assert site.template.text == "cannot open {path}"
    assert one(sites, 9).error_code == "ECONNABORTED"
    site = one(sites, 12)
    assert (site.error_class, site.error_code, site.chained) == ("AppError", "ERR_DENIED", True)
    site = one(sites, 15)
    assert (site.template.text, site.http_status) == ("forbidden", 403)


def test_console_logs_follow_util_format():
    sites = mine(
        {
            "m.js": """
            function f(a, n, o) {
              console.error('failed %s after %d (%i%%, %f) %j %o %O%c!', a, n, n, n, o, o, o, 'c');
              console.error('extra', a, n);
              console.error('more %s %s than arguments', a);
              console.error('100%% literal without arguments');
              console.warn(`careful: ${a}`);
              console.error(err);
              console.log('not an error');
            }
            """
        }
    )
    site = one(sites, 3)
    assert (site.kind, site.error_class, site.severity, site.form) == (
        SiteKind.LOG,
        "ERROR",
        Severity.ERROR,
        "format",
    )
    assert site.template.text == "failed {a} after {n} ({n}%, {n}) {o} {o} {o}!"
    assert [p.style for p in site.template.parts if p.hole] == [
        "%s",
        "%d",
        "%i",
        "%f",
        "%j",
        "%o",
        "%O",
    ]
    assert one(sites, 4).template.text == "extra {a} {n}"
    assert one(sites, 5).template.text == "more {a} %s than arguments"
    assert one(sites, 6).template.text == "100%% literal without arguments"
    site = one(sites, 7)
    assert summary(site) == ("warn", "WARNING", "template", "careful: {a}")
    assert site.severity is Severity.WARNING
    assert summary(one(sites, 8)) == ("log", "ERROR", "opaque", "{err}")
    assert at(sites, 9) == []


def test_assertions_warnings_and_deprecations():
    sites = mine(
        {
            "m.js": """
            const assert = require('node:assert');
            const util = require('util');
            const deprecate = require('depd')('mylib');
            function f(a, b) {
              assert(a, 'a is required');
              assert.ok(b, `b is ${b}`);
              assert.strictEqual(a, b, 'a and b differ');
              assert.equal(a, 1, 'loose');
              assert(a === b);
              assert.fail('never');
              process.emitWarning('old option', 'DeprecationWarning', 'DEP_OLD');
              process.emitWarning(`slow ${a}`, { type: 'PerformanceWarning', code: 'W_SLOW' });
              process.emitWarning('plain');
              deprecate('f(a): use g(a) instead');
              return util.deprecate(g, 'g() is deprecated', 'DEP0999');
            }
            """
        }
    )
    site = one(sites, 6)
    assert (site.kind, site.error_class, site.error_code) == (
        SiteKind.ASSERT,
        "AssertionError",
        "ERR_ASSERTION",
    )
    assert site.template.text == "a is required"
    assert one(sites, 7).template.text == "b is {b}"
    # Node 20 appends a diff to strictEqual's own message.
    assert one(sites, 8).template.text == "a and b differ{diff}"
    assert one(sites, 9).template.text == "loose"
    assert one(sites, 10).template.text == (
        "The expression evaluated to a falsy value:\n\n  assert(a === b)\n"
    )
    assert one(sites, 11).template.text == "never"
    warning = one(sites, 12)
    assert (warning.kind, warning.error_class, warning.error_code, warning.severity) == (
        SiteKind.WARN,
        "DeprecationWarning",
        "DEP_OLD",
        Severity.WARNING,
    )
    assert (one(sites, 13).error_class, one(sites, 13).error_code) == (
        "PerformanceWarning",
        "W_SLOW",
    )
    assert one(sites, 14).error_class == "Warning"
    assert summary(one(sites, 15)) == (
        "warn",
        "DeprecationWarning",
        "literal",
        "f(a): use g(a) instead",
    )
    assert (one(sites, 16).template.text, one(sites, 16).error_code) == (
        "g() is deprecated",
        "DEP0999",
    )


def test_http_errors_and_responses_give_statuses():
    sites = mine(
        {
            "app.js": """
            const createError = require('http-errors');
            function route(req, res, next, ctx) {
              next(createError(404, 'no user ' + req.params.id));
              throw createError(400);
              throw new createError.Forbidden('not yours');
              ctx.throw(401, 'login first');
              return res.status(409).json({ error: `conflict on ${req.path}` });
              res.status(500).send('internal');
              res.sendStatus(503);
              res.status(200).send('fine');
            }
            """
        }
    )
    site = one(sites, 4)
    assert (site.kind, site.error_class, site.http_status, site.template.text) == (
        SiteKind.HTTP,
        "NotFoundError",
        404,
        "no user {req.params.id}",
    )
    assert (one(sites, 5).error_class, one(sites, 5).template.text) == (
        "BadRequestError",
        "Bad Request",
    )
    assert (one(sites, 6).error_class, one(sites, 6).http_status) == ("ForbiddenError", 403)
    assert (one(sites, 7).error_class, one(sites, 7).http_status) == ("UnauthorizedError", 401)
    site = one(sites, 8)
    assert (site.error_class, site.http_status, site.template.text) == (
        "res.json",
        409,
        "conflict on {req.path}",
    )
    assert (one(sites, 9).http_status, one(sites, 9).template.text) == (500, "internal")
    assert (one(sites, 10).http_status, one(sites, 10).template.text) == (
        503,
        "Service Unavailable",
    )
    assert at(sites, 11) == []


def test_functions_are_named_as_v8_names_them():
    sites = mine(
        {
            "m.js": """
            class Command {
              constructor() { throw new Error('a'); }
              parse() { throw new Error('b'); }
              static create() { throw new Error('c'); }
            }
            Command.prototype.legacy = function () { throw new Error('d'); };
            const helper = (x) => { throw new Error('e'); };
            const table = { run() { throw new Error('f'); } };
            throw new Error('g');
            """
        }
    )
    names = {line: one(sites, line).function for line in (3, 4, 5, 7, 8, 9, 10)}
    assert names == {
        3: "new Command",
        4: "Command.parse",
        5: "Command.create",
        7: "Command.legacy",
        8: "helper",
        9: "run",
        10: None,
    }


# -- classes -----------------------------------------------------------------------------------


def test_error_classes_give_their_default_messages_codes_and_statuses():
    sites = mine(
        {
            "errors.js": """
            class SizeError extends Error {
              constructor(field, max) {
                super(`Field "${field}" exceeded ${max} bytes.`);
                this.name = 'SizeError';
                this.code = 'E_SIZE';
              }
            }
            class BodySizeError extends SizeError {
              constructor(max) {
                super('body', max);
              }
            }
            class Quiet extends BodySizeError {}
            class NotFound extends Error {
              status = 404;
              constructor(what = 'resource') {
                super(what + ' not found');
              }
            }
            class WithOptions extends Error {
              constructor(opts) {
                super(opts.message ?? opts.code);
                this.code = opts.code;
              }
            }
            class Renamed extends Error {
              constructor(message) {
                super(message);
                this.message = `[renamed] ${message}`;
              }
            }
            function f(name, limit) {
              throw new SizeError(name, limit);
              throw new BodySizeError(limit);
              throw new Quiet(1024);
              throw new NotFound('user');
              throw new NotFound();
              throw new WithOptions({ code: 'BAD_REQUEST', message: `bad ${name}` });
              throw new WithOptions({ code: 'NOT_FOUND' });
              throw new Renamed('x');
            }
            """
        }
    )
    site = one(sites, 34)
    assert summary(site) == (
        "raise",
        "SizeError",
        "class-template",
        'Field "{name}" exceeded {limit} bytes.',
    )
    assert site.error_code == "E_SIZE"
    # A subclass whose base sets ``this.name`` prints the base's name.
    assert summary(one(sites, 35)) == (
        "raise",
        "SizeError",
        "class-template",
        'Field "body" exceeded {limit} bytes.',
    )
    assert one(sites, 36).template.text == 'Field "body" exceeded 1024 bytes.'
    site = one(sites, 37)
    assert (site.template.text, site.http_status, site.kind) == (
        "user not found",
        404,
        SiteKind.HTTP,
    )
    assert one(sites, 38).template.text == "resource not found"
    site = one(sites, 39)
    assert (site.template.text, site.error_code, site.form) == (
        "bad {name}",
        "BAD_REQUEST",
        "template",
    )
    assert (one(sites, 40).template.text, one(sites, 40).error_code) == ("NOT_FOUND", "NOT_FOUND")
    assert one(sites, 41).template.text == "[renamed] x"


def test_function_constructors_are_error_classes():
    sites = mine(
        {
            "m.js": """
            function AppError(message, code) {
              Error.call(this);
              this.message = message;
              this.name = 'AppError';
              code && (this.code = code);
            }
            function Canceled(message) {
              AppError.call(this, message == null ? 'canceled' : message, 'ERR_CANCELED');
              this.name = 'Canceled';
            }
            function f(x) {
              throw new AppError('bad ' + x, AppError.ERR_BAD_VALUE);
              throw new Canceled(null);
              throw new Canceled('stopped');
            }
            """
        }
    )
    site = one(sites, 13)
    assert (site.error_class, site.template.text, site.error_code) == (
        "AppError",
        "bad {x}",
        "ERR_BAD_VALUE",
    )
    assert summary(one(sites, 14)) == ("raise", "Canceled", "class-template", "canceled")
    assert one(sites, 14).error_code == "ERR_CANCELED"
    assert texts(sites, 15) == ["stopped"]


def test_message_helpers_give_a_site_at_each_call():
    sites = mine(
        {
            "command.js": """
            class Command {
              _exit(exitCode, code, message) {
                throw new CommanderError(exitCode, code, message);
              }
              error(message, errorOptions) {
                const config = errorOptions || {};
                const code = config.code || 'commander.error';
                this._exit(config.exitCode || 1, code, message);
              }
              unknownOption(flag) {
                const message = `error: unknown option '${flag}'`;
                this.error(message, { code: 'commander.unknownOption' });
              }
              missing() {
                this.error('error: missing');
              }
            }
            function fail(msg) {
              console.error('fatal: %s', msg);
            }
            fail('no config');
            class CommanderError extends Error {
              constructor(exitCode, code, message) {
                super(message);
                this.code = code;
                this.exitCode = exitCode;
              }
            }
            """
        }
    )
    assert summary(one(sites, 4)) == ("raise", "CommanderError", "opaque", "{message}")
    site = one(sites, 13)
    assert summary(site) == (
        "raise",
        "CommanderError",
        "variable",
        "error: unknown option '{flag}'",
    )
    assert (site.error_code, site.factory, site.function) == (
        "commander.unknownOption",
        "error",
        "Command.unknownOption",
    )
    site = one(sites, 16)
    assert (site.template.text, site.error_code) == ("error: missing", "commander.error")
    assert summary(one(sites, 22)) == ("log", "ERROR", "format", "fatal: no config")


def test_local_message_functions_are_read_through():
    sites = mine(
        {
            "m.js": """
            function formatMessage(opt, desc) {
              return '[v1] option \\'' + opt + '\\'' + desc;
            }
            const describe = (x) => `the ${x} thing`;
            function f(name) {
              throw new Error(formatMessage(name, ' has been removed'));
              throw new Error(describe(name) + '!');
            }
            """
        }
    )
    assert one(sites, 7).template.text == "[v1] option '{name}' has been removed"
    assert one(sites, 8).template.text == "the {name} thing!"


# -- across files ------------------------------------------------------------------------------


def test_classes_and_constants_imported_from_other_modules():
    files = {
        "lib/errors.js": """
            const PREFIX = 'config';
            class ConfigError extends Error {
              constructor(key, options = {}) {
                super(`${PREFIX} key '${key}' is invalid`);
                this.code = options.code || 'ERR_CONFIG';
              }
            }
            const NOT_FOUND = 'resource not found';
            const { GONE } = require('./messages');
            class Gone extends Error {
              constructor() { super(GONE); }
            }
            module.exports = { ConfigError, NOT_FOUND, Gone };
            """,
        "lib/messages.js": "exports.GONE = 'it is gone';\n",
        "lib/main.js": """
            const { ConfigError, NOT_FOUND } = require('./errors');
            const errors = require('./errors.js');
            function load(key) {
              throw new ConfigError(key, { code: 'ERR_MISSING' });
              throw new errors.ConfigError('x');
              throw new Error(NOT_FOUND);
              throw new errors.Gone();
            }
            """,
        "src/base.mjs": """
            export class BaseError extends Error {
              constructor(what) { super(`${what} failed`); this.code = 'E_BASE'; }
            }
            export const TIMEOUT = 'timed out';
            """,
        "src/index.mjs": "export { BaseError as Failure, TIMEOUT } from './base.mjs';\n",
        "src/use.mjs": """
            import { Failure, TIMEOUT } from './index.mjs';
            import * as base from './base.mjs';
            export class RetryError extends Failure {
              constructor() { super('retry'); }
            }
            export function go() {
              throw new Failure('download');
              throw new RetryError();
              throw new base.BaseError('upload');
              throw new Error(`${TIMEOUT}`);
              throw new Error(TIMEOUT);
            }
            """,
    }
    extractor = JavaScriptExtractor()
    results = extract(files, extractor)
    # Before link, the imported class is unknown: the first argument is read as the message.
    use = next(r for r in results if r.path == "src/use.mjs")
    assert "pending" in use.exports
    assert [s.template.text for s in use.sites if s.line == 8] == ["download"]
    sites = extractor.link(results)
    site = one(sites, 5, "lib/main.js")
    assert (site.error_class, site.template.text, site.error_code, site.form) == (
        "ConfigError",
        "config key '{key}' is invalid",
        "ERR_MISSING",
        "class-template",
    )
    assert one(sites, 6, "lib/main.js").template.text == "config key 'x' is invalid"
    site = one(sites, 7, "lib/main.js")
    assert (site.template.text, site.form, site.defined_at) == (
        "resource not found",
        "constant",
        Location(path="lib/errors.js", line=9),
    )
    # The class's message is a constant its own module imports from a third one.
    site = one(sites, 8, "lib/main.js")
    assert (site.error_class, site.template.text, site.defined_at) == (
        "Gone",
        "it is gone",
        Location(path="lib/messages.js", line=1),
    )
    site = one(sites, 8, "src/use.mjs")
    # The class imported under another name still prints its own name.
    assert (site.error_class, site.template.text, site.error_code) == (
        "BaseError",
        "download failed",
        "E_BASE",
    )
    assert (
        one(sites, 9, "src/use.mjs").error_class,
        one(sites, 9, "src/use.mjs").template.text,
    ) == (
        "RetryError",
        "retry failed",
    )
    assert one(sites, 10, "src/use.mjs").template.text == "upload failed"
    assert one(sites, 11, "src/use.mjs").template.text == "{TIMEOUT}"
    assert one(sites, 12, "src/use.mjs").template.text == "timed out"


def test_typescript_imports_of_js_paths_find_ts_files():
    sites = mine(
        {
            "src/errors.ts": """
            export class TRPCError extends Error {
              public readonly code;
              constructor(opts: { message?: string; code: string; cause?: unknown }) {
                const message = opts.message ?? opts.code;
                super(message, { cause: opts.cause });
                this.code = opts.code;
                this.name = 'TRPCError';
              }
            }
            """,
            "src/router.ts": """
            import { TRPCError } from './errors.js';
            export function call(path: string) {
              throw new TRPCError({
                code: 'NOT_FOUND',
                message: `No procedure on path "${path}"`,
              });
            }
            """,
        },
        typescript=True,
    )
    site = one(sites, 4, "src/router.ts")
    assert summary(site) == ("raise", "TRPCError", "template", 'No procedure on path "{path}"')
    assert (site.error_code, site.message_line, site.end_line) == ("NOT_FOUND", 6, 7)


# -- TypeScript ------------------------------------------------------------------------------


def test_typescript_syntax_does_not_break_the_forms():
    sites = mine(
        {
            "m.ts": """
            export abstract class Base<T> extends Error implements Named {
              constructor(public field: string, private readonly max?: number) {
                super(`Field "${field}" exceeded ${max!} bytes.` as string);
              }
            }
            class Concrete extends Base<number> {}
            export function f<T extends object>(a: string, b: T | null): never {
              const msg: string = ('bad ' + (a as string) + ': ' + b!) satisfies string;
              if (a) throw new Concrete(a, 10);
              if (b) throw new TypeError<never>(<string>msg);
              console.warn(`typed ${a as unknown as string}` as const);
              throw new Error(msg);
            }
            enum Codes { A = 'a' }
            type X = { message: 'not a site' };
            """,
            "view.tsx": """
            export const View = ({ name }: { name: string }) => {
              if (!name) throw new Error(`missing ${name}`);
              return <div title="x">{name}</div>;
            };
            """,
        },
        typescript=True,
    )
    assert summary(one(sites, 10, "m.ts")) == (
        "raise",
        "Concrete",
        "class-template",
        'Field "{a}" exceeded 10 bytes.',
    )
    assert summary(one(sites, 11, "m.ts")) == ("raise", "TypeError", "variable", "bad {a}: {b}")
    assert one(sites, 12, "m.ts").template.text == "typed {a}"
    assert one(sites, 13, "m.ts").template.text == "bad {a}: {b}"
    assert {s.language for s in sites} == {"typescript"}
    assert one(sites, 3, "view.tsx").template.text == "missing {name}"


# -- broken files ------------------------------------------------------------------------------


def test_a_file_with_syntax_errors_keeps_the_sites_of_its_valid_parts():
    sites = mine(
        {
            "broken.js": """
            function ok(a) {
              throw new Error('still found ' + a);
            }
            function broken( {
              throw new Error('inside the broken part'
            }}}
            """
        }
    )
    assert one(sites, 3).template.text == "still found {a}"


@pytest.mark.parametrize(
    "data",
    [b"\x00\x01binary", b"\xff\xfe not utf-8", b"}}}}{{{{"],
    ids=["binary", "encoding", "garbage"],
)
def test_unreadable_files_are_problems_never_crashes(data):
    extractor = JavaScriptExtractor()
    try:
        result = extractor.extract(SourceFile("bad.js", data))
    except ExtractionError as exc:
        assert exc.kind in ("binary", "encoding", "syntax-error")
    else:
        assert result.sites == ()


def test_a_minified_bundle_is_a_generated_problem_not_sites():
    # streamlit's ``static/js/embed.CX5AQgxi.js``: built code with a hashed name, no suffix
    # to tell. Its average line is far longer than anyone writes.
    statements = ";".join(
        f"function f{i}(e){{if(!e)throw new Error(`{i} does not exist`)}}" for i in range(200)
    )
    with pytest.raises(ExtractionError) as refused:
        JavaScriptExtractor().extract(
            SourceFile("static/js/embed.CX5AQgxi.js", statements.encode())
        )
    assert refused.value.kind == "generated"
    assert "minified" in str(refused.value)
    # The same code as people write it, a statement a line, is mined; so is a short line.
    readable = ";\n".join(statements.split(";"))
    assert len(mine({"lib/embed.js": readable})) == 200
    assert len(mine({"one.js": statements[:300]})) >= 1


def test_hostile_nesting_and_huge_alternatives_stay_bounded():
    branches = "\n".join(f"  if (x === {i}) msg = 'branch {i} ' + x;" for i in range(40))
    deep = "throw new Error(" + "(" * 300 + "'deep'" + ")" * 300 + ");"
    sites = mine(
        {
            "m.js": f"function f(x) {{\n  let msg = 'none';\n{branches}\n"
            f"  throw new Error(msg);\n}}\n{deep}\n"
        }
    )
    assert 1 <= len(at(sites, 43)) <= 8
    assert [s.template.text for s in at(sites, 45)] == ["deep"]
    huge = "throw new Error('start' +\n" + " +\n".join(f"x{i}" for i in range(20_000)) + ");\n"
    (site,) = mine({"huge.js": huge})
    assert site.template.is_opaque and len(site.template.text) < 250


# -- real packages -----------------------------------------------------------------------------

NPM = {
    "commander": "12.1.0",
    "express": "4.21.2",
    "axios": "1.7.9",
    "@trpc/server": "10.45.2",
}


@pytest.fixture(scope="session")
def npm_roots() -> dict[str, Path]:
    # Session-scoped, so it runs before the per-test environment points the cache elsewhere.
    return {name: npm_package(name, version) for name, version in NPM.items()}


@pytest.fixture(scope="session")
def npm_sites(npm_roots) -> dict[str, list[RaiseSite]]:
    mined: dict[str, list[RaiseSite]] = {}
    for name, root in npm_roots.items():
        info = SourceInfo(key=name, repo=f"npm:{name}", kind="directory")
        source = DirectorySource(root, info)
        sites: list[RaiseSite] = []
        for extractor in (JavaScriptExtractor(), TypeScriptExtractor()):
            files = source.files(
                wanted=extractor.suffixes, max_bytes=5_000_000, include_tests=False
            )
            results = [extractor.extract(f) for f in files if not f.path.startswith("dist/")]
            sites += extractor.link(results)
        mined[name] = sites
    return mined


# (package, path, line, kind, class, templates, form, other fields) — each read in the source.
REAL = [
    (
        "commander",
        "lib/command.js",
        975,
        "raise",
        "Error",
        ["first parameter to parse must be array or undefined"],
        "literal",
        {"function": "Command._prepareUserArgs"},
    ),
    (
        "commander",
        "lib/command.js",
        2010,
        "raise",
        "CommanderError",
        ["error: unknown option '{flag}'{suggestion}"],
        "variable",
        {"error_code": "commander.unknownOption", "factory": "error"},
    ),
    (
        "commander",
        "lib/command.js",
        1910,
        "raise",
        "CommanderError",
        ["error: missing required argument '{name}'"],
        "variable",
        {"error_code": "commander.missingArgument"},
    ),
    (
        "commander",
        "lib/option.js",
        183,
        "raise",
        "InvalidArgumentError",
        ["Allowed choices are {this.argChoices.join(', ')}."],
        "template",
        {"error_code": "commander.invalidArgument", "message_line": 184},
    ),
    (
        "express",
        "lib/application.js",
        131,
        "raise",
        "Error",
        [
            "'app.router' is deprecated!\nPlease see the 3.x to 4.x migration guide for details "
            "on how to update your app."
        ],
        "literal",
        {},
    ),
    (
        "express",
        "lib/application.js",
        217,
        "raise",
        "TypeError",
        ["app.use() requires a middleware function"],
        "literal",
        {"function": "use"},
    ),
    (
        "express",
        "lib/router/route.js",
        216,
        "raise",
        "Error",
        ["Route.{method}() requires a callback function but got a {type}"],
        "variable",
        {},
    ),
    (
        "express",
        "lib/response.js",
        1062,
        "raise",
        "Error",
        ["Request aborted"],
        "literal",
        {"error_code": "ECONNABORTED"},
    ),
    (
        "express",
        "lib/response.js",
        703,
        "http",
        "NotAcceptableError",
        ["Not Acceptable"],
        "literal",
        {"http_status": 406},
    ),
    (
        "express",
        "lib/response.js",
        140,
        "warn",
        "DeprecationWarning",
        ["res.send(status): Use res.sendStatus(status) instead"],
        "literal",
        {},
    ),
    (
        "express",
        "lib/application.js",
        647,
        "log",
        "ERROR",
        ["{err.stack}"],
        "opaque",
        {},
    ),
    (
        "axios",
        "lib/core/settle.js",
        19,
        "raise",
        "AxiosError",
        ["Request failed with status code {response.status}"],
        "concat",
        {"message_line": 20},
    ),
    (
        "axios",
        "lib/adapters/xhr.js",
        110,
        "raise",
        "AxiosError",
        ["Network Error"],
        "literal",
        {"error_code": "ERR_NETWORK"},
    ),
    (
        "axios",
        "lib/core/dispatchRequest.js",
        23,
        "raise",
        "CanceledError",
        ["canceled"],
        "class-template",
        {"error_code": "ERR_CANCELED"},
    ),
    (
        "axios",
        "lib/adapters/http.js",
        657,
        "raise",
        "AxiosError",
        [
            "timeout exceeded",
            "timeout of {config.timeout}ms exceeded",
            "{config.timeoutErrorMessage}",
        ],
        "variable",
        {},
    ),
    (
        "axios",
        "lib/helpers/validator.js",
        58,
        "warn",
        "WARNING",
        ["{opt} is likely a misspelling of {correctSpelling}"],
        "template",
        {},
    ),
    (
        "@trpc/server",
        "src/core/router.ts",
        288,
        "raise",
        "TRPCError",
        ['No "{type}"-procedure on path "{path}"'],
        "template",
        {"error_code": "NOT_FOUND", "language": "typescript"},
    ),
    (
        "@trpc/server",
        "src/adapters/node-http/content-type/form-data/uploadHandler.ts",
        82,
        "raise",
        "MaxPartSizeExceededError",
        ['Field "{name}" exceeded upload size of {maxPartSize} bytes.'],
        "class-template",
        {},
    ),
    (
        "@trpc/server",
        "src/adapters/aws-lambda/index.ts",
        73,
        "raise",
        "TRPCError",
        [
            "Custom payload format version not handled by this adapter. Please use either 1.0 "
            "or 2.0. More information herehttps://docs.aws.amazon.com/apigateway/latest/"
            "developerguide/http-api-develop-integrations-lambda.html"
        ],
        "constant",
        {"defined_at": Location(path="src/adapters/aws-lambda/utils.ts", line=152)},
    ),
]


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(
    ("package", "path", "line", "kind", "error_class", "templates", "form", "fields"),
    REAL,
    ids=[f"{row[0]}:{row[1].rsplit('/', 1)[-1]}:{row[2]}" for row in REAL],
)
def test_known_records_of_real_packages(
    npm_sites, package, path, line, kind, error_class, templates, form, fields
):
    found = [s for s in npm_sites[package] if s.path == path and s.line == line]
    assert sorted(s.template.text for s in found) == sorted(templates)
    for site in found:
        expected_form = "opaque" if site.template.is_opaque else form
        assert (site.kind.value, site.error_class, site.form) == (kind, error_class, expected_form)
        for name, value in fields.items():
            assert getattr(site, name) == value, name
        assert site.source_code_start <= line <= site.source_code_end


@pytest.mark.network
@pytest.mark.slow
def test_real_packages_give_mostly_specific_templates(npm_sites):
    raises = [s for sites in npm_sites.values() for s in sites if s.kind is SiteKind.RAISE]
    assert len(raises) > 150
    opaque = [s for s in raises if s.template.is_opaque]
    assert len(opaque) / len(raises) < 0.15, [(s.path, s.line) for s in opaque]
    throws = {
        (path, number)
        for name, root in npm_roots_of(npm_sites).items()
        for path, number in throw_new_lines(root)
    }
    found = {(s.path, s.line) for sites in npm_sites.values() for s in sites}
    missing = sorted(throws - found)
    assert not missing, missing


def npm_roots_of(npm_sites) -> dict[str, Path]:
    return {name: npm_package(name, NPM[name]) for name in npm_sites}


def throw_new_lines(root: Path) -> set[tuple[str, int]]:
    """Every ``throw new X(`` line of the package's sources (an independent count)."""
    lines: set[tuple[str, int]] = set()
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if path.suffix not in (".js", ".ts", ".mjs", ".cjs") or relative.startswith("dist/"):
            continue
        if relative.endswith(".d.ts") or "/test" in relative or relative.startswith("test"):
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = text.strip()
            if stripped.startswith("throw new ") and not stripped.startswith("//"):
                lines.add((relative, number))
    return lines


# -- the property: real formatting matches the mined templates ---------------------------------
#
# Each case is a function whose message is built by one JavaScript form. errdex mines the file
# once; for generated values, the message the runtime builds (emulated below, and — when
# ``node`` is installed — produced by node itself running the very same file) must be matched
# in full by the site's template, and by its messagePattern when every value is non-empty.

PROPERTY_HEADER = r"""'use strict';
const util = require('util');
const assert = require('assert');
class SizeError extends Error {
  constructor(field, max) {
    super(`Field "${field}" exceeded ${max} bytes.`);
  }
}
class OptionsError extends Error {
  constructor(opts) {
    super(opts.message ?? opts.code);
    this.code = opts.code;
  }
}
function fail(message) {
  throw new Error(message);
}
function describe(thing) {
  return 'the ' + thing + ' thing';
}
"""

# name → (parameters with kinds, body, the message as JavaScript builds it). Kinds: s = text,
# i = integer.
PROPERTY_CASES: dict[str, tuple[dict[str, str], str, object]] = {
    "template": (
        {"a": "s", "b": "s"},
        "throw new Error(`x ${a} y ${b}.`);",
        lambda a, b: f"x {a} y {b}.",
    ),
    "concat": (
        {"a": "s", "b": "s"},
        "throw new TypeError('start ' + a + \" mid '\" + b + '\\' end');",
        lambda a, b: "start " + a + " mid '" + b + "' end",
    ),
    "escapes": (
        {"a": "s"},
        r"throw new RangeError('tab\t' + a + '\u00e9\x41\u{1F600} $' + '{b} \\ \'');",
        lambda a: "tab\t" + a + "\u00e9A\U0001f600 ${b} \\ '",
    ),
    "variable-branches": (
        {"a": "s", "b": "s"},
        "let msg;\n"
        "if (a < b) {\n  msg = `first ${a}`;\n} else {\n  msg = 'second ' + b;\n}\n"
        "msg += ' (' + a + ')';\nthrow new Error(msg);",
        lambda a, b: (f"first {a}" if a < b else "second " + b) + " (" + a + ")",
    ),
    "class-default": (
        {"a": "s", "n": "i"},
        "throw new SizeError(a, n);",
        lambda a, n: f'Field "{a}" exceeded {n} bytes.',
    ),
    "options-object": (
        {"a": "s"},
        "throw new OptionsError({ message: `bad ${a}`, code: 'E_BAD' });",
        lambda a: f"bad {a}",
    ),
    "console-format": (
        {"a": "s", "n": "i", "b": "s", "c": "s"},
        "console.error('got %s and %d, 100%% %o%c!', a, n, b, 'color: red', c);",
        lambda a, n, b, c: f"got {a} and {n}, 100% {b!r}! {c}",
    ),
    "console-template": (
        {"a": "s", "b": "s"},
        "console.warn(`careful: ${a}`, b);",
        lambda a, b: f"careful: {a} {b}",
    ),
    "assert-strict": (
        {"a": "s"},
        "assert.strictEqual(a + '!', a, `mismatch ${a}`);",
        lambda a: f"mismatch {a}\n\n'{a}!' !== '{a}'\n",
    ),
    "helper": (
        {"a": "s", "b": "s"},
        "fail(`helper ${a} and ${b}`);",
        lambda a, b: f"helper {a} and {b}",
    ),
    "message-function": (
        {"a": "s", "b": "s"},
        "throw new Error(describe(a) + ' / ' + b);",
        lambda a, b: "the " + a + " thing / " + b,
    ),
    "default": (
        {"b": "s"},
        "const label = b || 'unnamed';\nthrow new Error('label: ' + label);",
        lambda b: "label: " + (b or "unnamed"),
    ),
}


def _property_source() -> tuple[str, dict[str, tuple[int, int]]]:
    lines = PROPERTY_HEADER.splitlines()
    spans: dict[str, tuple[int, int]] = {}
    for index, (name, (params, body, _)) in enumerate(PROPERTY_CASES.items()):
        lines.append(f"function case_{index}({', '.join(params)}) {{")
        first = len(lines) + 1
        lines.extend("  " + line for line in body.splitlines())
        spans[name] = (first, len(lines))
        lines.append("}")
    exported = ", ".join(f"'{name}': case_{i}" for i, name in enumerate(PROPERTY_CASES))
    lines.append(f"module.exports = {{ {exported} }};")
    return "\n".join(lines) + "\n", spans


PROPERTY_SOURCE, PROPERTY_SPANS = _property_source()


@pytest.fixture(scope="module")
def property_sites() -> dict[str, list[RaiseSite]]:
    sites = mine({"cases.js": PROPERTY_SOURCE})
    return {
        name: [s for s in sites if first <= s.line <= last]
        for name, (first, last) in PROPERTY_SPANS.items()
    }


def _matches(sites: list[RaiseSite], message: str, values: list[object]) -> None:
    import re

    from errdex.analyze.templates import seed_pattern
    from errdex.match.compile import compile_template

    matched = [s for s in sites if compile_template(s.template).match(message) is not None]
    assert matched, (message, [s.template.text for s in sites])
    if all(v != "" for v in values):
        patterns = [seed_pattern(s.template) for s in matched]
        assert any(re.fullmatch(p, message, re.DOTALL) for p in patterns), (message, patterns)


def test_every_property_case_is_mined_as_a_template(property_sites):
    for name, sites in property_sites.items():
        assert sites, name
        assert all(not s.template.is_opaque for s in sites), name
        assert all(s.template.holes for s in sites), name
    assert len(property_sites["variable-branches"]) == 2
    assert {s.form for s in property_sites["console-format"]} == {"format"}


# Text hostile to a naive template or regex, and to JavaScript's own syntax.
HOSTILE = ["", " ", "\n", ".*", "(.+?)", "\\", "$1", "${a}", "`", "%s", "%%", "'", '"', "é", "🙂"]


def _text_strategy():
    from hypothesis import strategies as st

    hostile = st.sampled_from(HOSTILE)
    return st.one_of(
        st.text(max_size=12),
        st.text(alphabet=".^$*+?{}[]\\|()\n'\"%`: é🙂x", max_size=12),
        hostile,
        st.lists(hostile, max_size=4).map("".join),
    )


@pytest.mark.parametrize("name", list(PROPERTY_CASES))
def test_the_message_javascript_builds_matches_the_template(property_sites, name):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    params, _, build = PROPERTY_CASES[name]
    kinds = {"s": _text_strategy(), "i": st.integers(min_value=-(10**9), max_value=10**9)}

    @settings(max_examples=100, deadline=None)
    @given(data=st.data())
    def check(data):
        values = [data.draw(kinds[kind], label=param) for param, kind in params.items()]
        message = build(*values)  # type: ignore[operator]
        _matches(property_sites[name], message, values)

    check()


NODE_RUNNER = r"""
const util = require('util');
const cases = require(process.argv[2]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const captured = [];
console.error = (...args) => captured.push(util.format(...args));
console.warn = console.error;
const out = [];
for (const [name, values] of input) {
  captured.length = 0;
  try {
    cases[name](...values);
    out.push(captured.length ? captured[captured.length - 1] : null);
  } catch (error) {
    out.push(error.message);
  }
}
process.stdout.write(JSON.stringify(out));
"""


def test_node_itself_builds_messages_the_templates_match(property_sites, tmp_path):
    """The same cases run by node, in one process, on a batch of hostile and random values."""
    import json
    import random
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the real-runtime batch needs it")
    (tmp_path / "cases.js").write_text(PROPERTY_SOURCE, encoding="utf-8")
    (tmp_path / "run.js").write_text(NODE_RUNNER, encoding="utf-8")
    generator = random.Random(7)
    alphabet = list(".^$*+?{}[]\\|()\n'\"%`: é🙂x") + HOSTILE

    def draw(kind: str) -> object:
        if kind == "i":
            return generator.randint(-(10**9), 10**9)
        return "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 6)))

    batch = [
        (name, [draw(kind) for kind in params.values()])
        for name, (params, _, _) in PROPERTY_CASES.items()
        for _ in range(40)
    ]
    result = subprocess.run(
        [node, str(tmp_path / "run.js"), str(tmp_path / "cases.js")],
        input=json.dumps(batch),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    messages = json.loads(result.stdout)
    assert len(messages) == len(batch)
    for (name, values), message in zip(batch, messages, strict=True):
        assert message is not None, name
        _matches(property_sites[name], message, values)


def test_typescript_reads_the_same_cases_the_same_way(property_sites):
    typed = PROPERTY_SOURCE.replace("function case_", "function case_").replace(
        "constructor(field, max)", "constructor(field: string, max: number)"
    )
    for name, (params, _, _) in PROPERTY_CASES.items():
        index = list(PROPERTY_CASES).index(name)
        plain = f"function case_{index}({', '.join(params)})"
        annotated = ", ".join(
            f"{p}: {'string' if k == 's' else 'number'}" for p, k in params.items()
        )
        typed = typed.replace(plain, f"function case_{index}({annotated}): void")
    sites = mine({"cases.ts": typed}, typescript=True)
    for name, (first, last) in PROPERTY_SPANS.items():
        found = sorted(s.template.text for s in sites if first <= s.line <= last)
        assert found == sorted(s.template.text for s in property_sites[name]), name


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("concat.js", "throw new Error(" + " +\n".join(['"a"'] * 20_000) + ");\n"),
        ("template.js", "throw new Error(`" + "${a}\n" * 20_000 + "`);\n"),
        (
            "variable.ts",
            "const m: string = " + " +\n".join(["'b'"] * 20_000) + ";\nthrow Error(m);\n",
        ),
    ],
)
def test_long_generated_messages_take_linear_time(path, source):
    # A generated file can hold a 20,000-operand concatenation or template; both were
    # quadratic (5–19 s each) and must stay well under a second or two. (An operand a line:
    # on one line, the file is a minified bundle and refused.)
    import time

    started = time.process_time()
    sites = mine({path: source}, typescript=path.endswith(".ts"))
    assert time.process_time() - started < 3.0
    assert len(sites) == 1
