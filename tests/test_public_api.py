import subprocess
import sys
import types

import errdex


def test_all_is_sorted_and_complete():
    assert errdex.__all__ == sorted(errdex.__all__)
    public = {
        name
        for name, value in vars(errdex).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public <= set(errdex.__all__)
    for name in errdex.__all__:
        assert hasattr(errdex, name), name


def test_the_core_does_not_import_interface_libraries():
    code = (
        "import sys, errdex, errdex.pipeline, errdex.match;"
        "bad = [m for m in ('typer', 'rich', 'fastapi', 'jinja2', 'click') if m in sys.modules];"
        "print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
