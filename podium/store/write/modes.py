"""Option values shared by the store and the commands, importable without pyarrow."""

from typing import Literal

WriteMode = Literal["create", "append", "overwrite"]
WRITE_MODES: tuple[str, ...] = ("create", "append", "overwrite")

ChatFormat = Literal["openai", "sharegpt", "prompt-response"]
