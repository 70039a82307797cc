"""Print the API's OpenAPI schema: `python -m dragdl.server.openapi [--out FILE]`.

The frontend generates its TypeScript client from this file (`npm run gen:api`), so the schema
is the contract between the two. Building the app starts nothing: no database, no runner.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def openapi_schema() -> dict[str, Any]:
    from dragdl.server.app import create_app
    from dragdl.server.settings import Settings

    with tempfile.TemporaryDirectory() as data_dir:
        schema: dict[str, Any] = create_app(Settings.from_env(Path(data_dir), auth_enabled=False)).openapi()
    return schema


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="Write to this file instead of standard output.")
    args = parser.parse_args(argv)
    text = json.dumps(openapi_schema(), indent=2, sort_keys=False) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
