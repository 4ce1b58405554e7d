"""The web UI and the HTTP API over the store and the explainer (``errdex serve``).

:func:`create_app` builds the FastAPI application; nothing here holds state at import time.
Needs the ``web`` extra (``pip install 'errdex[web]'``).
"""

from __future__ import annotations

from errdex.web.app import WebOptions, create_app

__all__ = ["WebOptions", "create_app"]
