"""Shared by the conformance scripts: the SDK client, its major version, and the JSON result line."""

import json
import os
import sys
from importlib.metadata import version

from langfuse import Langfuse

SDK_VERSION = version("langfuse")
MAJOR = int(SDK_VERSION.split(".")[0])
CASE = os.environ.get("CONFORMANCE_CASE", "case")


def client() -> Langfuse:
    return Langfuse(
        public_key=os.environ["LANGFUSE_PUBLIC_KEY"],
        secret_key=os.environ["LANGFUSE_SECRET_KEY"],
        host=os.environ["LANGFUSE_HOST"],
        # The SDKs' default (5 s) is shorter than a synchronous deletion's mutations take on a
        # loaded CI machine; every call stays bounded.
        timeout=30,
    )


def api(lf: Langfuse):
    """The generated REST client: `client` on 2.x, `api` from 3.x on."""
    return lf.client if MAJOR == 2 else lf.api


def request_or_kwargs(method, model_name: str, module: str, **fields):
    """Calls a generated endpoint whether it takes `request=` (older clients) or keyword fields."""
    import importlib
    import inspect

    if "request" in inspect.signature(method).parameters:
        model = getattr(importlib.import_module(module), model_name)
        return method(request=model(**fields))
    return method(**fields)


def close(lf: Langfuse) -> None:
    lf.flush()
    lf.shutdown()


def done(result: dict) -> None:
    result["sdkVersion"] = SDK_VERSION
    sys.stdout.write(json.dumps(result, default=str) + "\n")
    sys.stdout.flush()
